package hosted

import (
	"net/url"
	"strings"
)

// ServerName is what people call the server (status, `hearthd servers`,
// log file names, the advice in errors): its config name, else the name
// its client's entry gives it (hearth run --name), else the name derived
// from what it runs (RunName). Several instances may share it (one
// per directory); their keys tell them apart (docs/architecture.md,
// "Hosted servers").
func (s Spec) ServerName() string {
	if s.Name != "" {
		return s.Name
	}
	if s.Entry != "" {
		return s.Entry
	}
	if s.IsRemote() {
		if u, err := url.Parse(s.URL); err == nil && u.Hostname() != "" {
			return u.Hostname()
		}
		return "remote"
	}
	return RunName(s.Command, s.Args)
}

// RunName names an inline command after what it runs rather than after the
// launcher that runs it: `npx -y @scope/pkg@1.2` is "@scope/pkg", not
// "npx". The rule, the one place it is written:
//
//   - npx, npm exec|x, pnpx, pnpm dlx, bunx, bun x, yarn dlx: the npm
//     package, without its @version (a @scope is kept);
//   - uvx, uv tool run, pipx run: the PyPI package, without its version
//     or extras (==1.0, @1.0, [cli]);
//   - docker|podman run (or container run): the image, without its tag or
//     digest;
//   - node, python, deno, bun, uv run, ruby, perl, php, sh, bash and the
//     like: the script's base name (`python -m MOD`: MOD);
//   - anything else: the command's base name.
//
// A Windows command is read the same way on every system: a backslash
// separates, and a launcher is known without .exe, .cmd, .bat or .com
// (C:\...\npm\npx.cmd is npx).
//
// Options are skipped with the values of those known to take one. Only
// that one argument goes into the name, and none that looks like a
// value (with "=", "://" or a secret redacted away): otherwise the name is
// the command's base name.
func RunName(command string, args []string) string {
	name, _ := runName(command, args)
	return name
}

// Launched reports whether the rule above reads command through a launcher
// or an interpreter it knows (npx, uvx, docker run, node, python, sh, ...)
// to what it runs: how the orphan sweep (pkg/sweep) recognises a stdio MCP
// server by how it was started.
func Launched(command string, args []string) bool {
	_, launched := runName(command, args)
	return launched
}

// runName is RunName, and whether a launcher or interpreter named it.
func runName(command string, args []string) (string, bool) {
	base := baseName(command)
	if command == "" {
		return "", false
	}
	tool := launcherName(base)
	sub := func(words ...string) ([]string, bool) {
		i := 0
		for _, w := range words {
			for i < len(args) && strings.HasPrefix(args[i], "-") {
				i++ // a launcher's own switches before its subcommand (pnpm --silent dlx)
			}
			if i >= len(args) || args[i] != w {
				return nil, false
			}
			i++
		}
		return args[i:], true
	}
	name := ""
	switch {
	case tool == "npx" || tool == "pnpx" || tool == "bunx":
		name = npmPackage(positional(args, npxValue))
	case tool == "npm" || tool == "pnpm" || tool == "yarn" || tool == "bun":
		for _, w := range []string{"exec", "x", "dlx"} {
			if rest, ok := sub(w); ok {
				name = npmPackage(positional(rest, npxValue))
				break
			}
		}
		if name == "" && tool == "bun" {
			if rest, ok := sub("run"); ok {
				name = script(positional(rest, nil))
			} else {
				name = script(positional(args, nil))
			}
		}
	case tool == "uvx":
		name = pypiPackage(positional(args, uvValue))
	case tool == "uv":
		if rest, ok := sub("tool", "run"); ok {
			name = pypiPackage(positional(rest, uvValue))
		} else if rest, ok := sub("run"); ok {
			name = script(positional(rest, uvValue))
		}
	case tool == "pipx":
		if rest, ok := sub("run"); ok {
			name = pypiPackage(positional(rest, pipxValue))
		}
	case tool == "docker" || tool == "podman":
		rest, ok := sub("run")
		if !ok {
			rest, ok = sub("container", "run")
		}
		if ok {
			name = image(positional(rest, dockerValue))
		}
	case tool == "deno":
		if rest, ok := sub("run"); ok {
			name = script(positional(rest, denoValue))
		}
	case strings.HasPrefix(tool, "python"):
		name = python(args)
	case interpreters[tool]:
		name = script(positional(args, nodeValue))
	}
	if !plainName(name) {
		return base, name != ""
	}
	return name, true
}

// interpreters run a script named by their first argument.
var interpreters = map[string]bool{
	"node": true, "nodejs": true, "tsx": true, "ts-node": true, "ruby": true, "perl": true, "php": true,
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true,
}

// The options known to take the next argument as their value, by launcher.
var (
	npxValue    = set("-p", "--package", "-c", "--call", "-w", "--workspace", "--prefix", "--registry", "--userconfig", "--cache", "--loglevel", "--node-options")
	uvValue     = set("--from", "--with", "--with-editable", "--with-requirements", "-p", "--python", "--index", "-i", "--index-url", "--extra-index-url", "--default-index", "-f", "--find-links", "--directory", "--project", "--config-file", "--cache-dir", "--env-file", "-c", "--constraints", "--overrides", "-b", "--build-constraints", "--index-strategy", "--keyring-provider", "--resolution", "--prerelease", "--exclude-newer", "--link-mode", "-P", "--upgrade-package", "--reinstall-package", "--refresh-package", "--allow-insecure-host", "--color", "--no-binary-package", "--only-binary-package", "--script", "--package", "--extra", "--group", "--only-group", "--no-group")
	pipxValue   = set("--spec", "--python", "--index-url", "-i", "--pip-args", "--backend")
	denoValue   = set("--config", "-c", "--import-map", "--lock", "--cert", "--location", "--seed", "--v8-flags", "--inspect", "--env-file", "--reload", "-r", "--unstable-features")
	nodeValue   = set("-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file", "--title", "--conditions", "-C", "--input-type", "--stack-size", "--max-old-space-size", "-o", "--rcfile", "--init-file")
	dockerValue = set("-a", "--attach", "--add-host", "--annotation", "--blkio-weight", "--cap-add", "--cap-drop", "--cgroup-parent", "--cgroupns", "--cidfile", "-c", "--cpu-shares", "--cpus", "--cpuset-cpus", "--cpuset-mems", "--device", "--dns", "--dns-option", "--dns-search", "--domainname", "--entrypoint", "-e", "--env", "--env-file", "--expose", "--gpus", "--group-add", "--health-cmd", "--health-interval", "--health-retries", "--health-start-period", "--health-timeout", "-h", "--hostname", "--ip", "--ip6", "--ipc", "--isolation", "-l", "--label", "--label-file", "--link", "--log-driver", "--log-opt", "--mac-address", "-m", "--memory", "--memory-reservation", "--memory-swap", "--mount", "--name", "--network", "--net", "--network-alias", "--oom-score-adj", "--pid", "--pids-limit", "--platform", "-p", "--publish", "--pull", "--restart", "--runtime", "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs", "--ulimit", "-u", "--user", "--userns", "--uts", "-v", "--volume", "--volume-driver", "--volumes-from", "-w", "--workdir")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// positional is the first argument that is not an option nor the value of
// one (an option in valued takes the next argument; a run of short
// switches such as -it does when its last letter does). After "--" the
// next argument is positional whatever it looks like.
func positional(args []string, valued map[string]bool) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		case !strings.HasPrefix(a, "-") || a == "-":
			return a
		case strings.Contains(a, "="):
		case valued[a]:
			i++
		case !strings.HasPrefix(a, "--") && len(a) > 2 && valued["-"+a[len(a)-1:]]:
			i++
		}
	}
	return ""
}

// npmPackage is a package spec without its version: @scope/name@1 is
// @scope/name, name@latest is name.
func npmPackage(spec string) string {
	if at := strings.LastIndexByte(spec, '@'); at > 0 {
		spec = spec[:at]
	}
	return spec
}

// pypiPackage is a requirement without its version, marker or extras.
func pypiPackage(spec string) string {
	if strings.Contains(spec, "=") && !strings.ContainsAny(spec, "<>!~") && !strings.Contains(spec, "==") {
		return "" // NAME=VALUE is no requirement
	}
	if i := strings.IndexAny(spec, "=<>!~@[; "); i > 0 {
		spec = spec[:i]
	}
	return spec
}

// image is a container image without its tag or digest (a registry's
// port is kept: localhost:5000/img).
func image(ref string) string {
	if at := strings.IndexByte(ref, '@'); at >= 0 {
		ref = ref[:at]
	}
	if c := strings.LastIndexByte(ref, ':'); c > strings.LastIndexByte(ref, '/') {
		ref = ref[:c]
	}
	return ref
}

// script is a script's base name.
func script(path string) string {
	if path == "" {
		return ""
	}
	if pkg := installedPackage(path); pkg != "" {
		return pkg
	}
	return baseName(path)
}

// installedPackage is the npm package a script installed under
// node_modules belongs to (…/node_modules/@scope/name/dist/index.js is
// @scope/name), the name npx would be given for it, where the file's own
// name (index.js) tells nothing; "" for a script elsewhere or in .bin.
func installedPackage(path string) string {
	path = strings.ReplaceAll(path, `\`, "/")
	i := strings.LastIndex(path, "/node_modules/")
	if i < 0 {
		return ""
	}
	parts := strings.Split(path[i+len("/node_modules/"):], "/")
	if len(parts) < 2 || strings.HasPrefix(parts[0], ".") {
		return ""
	}
	if strings.HasPrefix(parts[0], "@") {
		if len(parts) < 3 || parts[1] == "" {
			return ""
		}
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// baseName is the last element of a path written for any system: a
// Windows command (C:\Users\me\AppData\Roaming\npm\npx.cmd) is named like
// a Unix one whatever system reads it, so a backslash separates too (a
// Unix file name with a backslash in it is named after its last part).
func baseName(path string) string {
	if path == "" {
		return "."
	}
	path = strings.TrimRight(path, `/\`)
	if path == "" {
		return "/"
	}
	return path[strings.LastIndexAny(path, `/\`)+1:]
}

// launcherName is a command's base name as the rule matches it: lower
// case, without the extension Windows runs it by (npx.cmd, NPX.CMD,
// python.exe), so that a launcher is known on every system.
func launcherName(base string) string {
	tool := strings.ToLower(base)
	for _, ext := range []string{".exe", ".cmd", ".bat", ".com"} {
		if t, ok := strings.CutSuffix(tool, ext); ok && t != "" {
			return t
		}
	}
	return tool
}

// python names `python -m MOD` MOD, else the script.
func python(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			return a[2:]
		case a == "-c":
			return ""
		case a == "-W" || a == "-X" || a == "--check-hash-based-pycs":
			i++
		case !strings.HasPrefix(a, "-") || a == "-":
			return script(a)
		}
	}
	return ""
}

// plainName: a name that is one package, image or script and carries no
// value that may be a secret.
func plainName(name string) bool {
	if name == "" || name == "." || name == "/" || strings.HasPrefix(name, "-") || len(name) > 100 {
		return false
	}
	if strings.ContainsAny(name, "= \t\n\"'`$\\") || strings.Contains(name, "://") {
		return false
	}
	return redactArg(name) == name
}
