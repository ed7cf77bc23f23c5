package hosted

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// An inline server is named after what it runs, not the launcher that runs
// it; no value that may be a secret becomes its name.
func TestRunName(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want string
	}{
		{"/usr/bin/npx -y @modelcontextprotocol/server-everything", "@modelcontextprotocol/server-everything"},
		{"npx --yes @modelcontextprotocol/server-filesystem@2025.1.1 /home/u", "@modelcontextprotocol/server-filesystem"},
		{"npx -p typescript -y tsx@latest server.ts", "tsx"},
		{"npx --package=@a/b cmd-of-b", "cmd-of-b"},
		{"npx -q mcp-server-kubernetes@1.2", "mcp-server-kubernetes"},
		{"npx -c echo", "npx"},
		{"npx", "npx"},
		{"pnpm dlx @playwright/mcp@latest --headless", "@playwright/mcp"},
		{"pnpm --silent dlx chrome-devtools-mcp", "chrome-devtools-mcp"},
		{"pnpx @upstash/context7-mcp", "@upstash/context7-mcp"},
		{"bunx @upstash/context7-mcp@1", "@upstash/context7-mcp"},
		{"bun x some-mcp", "some-mcp"},
		{"bun run ./src/index.ts", "index.ts"},
		{"yarn dlx -p x server-y", "server-y"},
		{"npm exec -- @scope/srv@2 --flag", "@scope/srv"},
		{"uvx mcp-server-fetch", "mcp-server-fetch"},
		{"uvx --from git+https://user:tok@example.com/r.git mcp-git", "mcp-git"},
		{"uvx --python 3.12 mcp-server-time==0.6.2 --local-timezone=UTC", "mcp-server-time"},
		{"uvx serena[cli]@latest start-mcp-server", "serena"},
		{"uv tool run --with x mcp-server-git", "mcp-server-git"},
		{"uv run --directory /srv/weather weather.py", "weather.py"},
		{"pipx run --spec mcp-foo==1 mcp-foo-server", "mcp-foo-server"},
		{"pipx run mcp-bar>=2", "mcp-bar"},
		{"docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server", "ghcr.io/github/github-mcp-server"},
		{"docker run -i --rm --name fetcher -v /a:/b --env=X=1 mcp/fetch:1.2", "mcp/fetch"},
		{"docker run -it -e A=b mcp/time@sha256:abcd", "mcp/time"},
		{"docker run --rm -i localhost:5000/my/img:tag", "localhost:5000/my/img"},
		{"podman container run -i --network host mcp/sqlite stdio", "mcp/sqlite"},
		{"docker ps", "docker"},
		{"node /home/u/weather/build/index.js", "index.js"},
		{"node /home/u/app/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "@modelcontextprotocol/server-everything"},
		{"node /usr/lib/node_modules/mcp-server-k8s/build/index.js --ro", "mcp-server-k8s"},
		{"node /x/node_modules/.bin/mcp-foo", "mcp-foo"},
		{"node /x/node_modules/@scope", "@scope"},
		{"node /x/node_modules/pkg", "pkg"},
		{"node --require ts-node/register ./server.ts", "server.ts"},
		{"node", "node"},
		{"/usr/bin/python3 server.py --db x", "server.py"},
		{"python3 -u -m mcp_server_fetch", "mcp_server_fetch"},
		{"python -mmcp_server_time", "mcp_server_time"},
		{"python3 -c print(1)", "python3"},
		{"python3.12 -W ignore tools/srv.py", "srv.py"},
		{"deno run -A --config deno.json jsr:@x/y/main.ts", "main.ts"},
		{"bash crasher.sh", "crasher.sh"},
		{"sh -e /opt/x/start.sh", "start.sh"},
		{"/home/u/bin/crasher.sh", "crasher.sh"},
		{"./crasher.sh --token abc", "crasher.sh"},
		{"/opt/serve --port 3", "serve"},
		// Windows: a launcher is known by its name without .cmd or .exe,
		// and a backslash separates, whatever system reads the command.
		{`C:\Users\me\AppData\Roaming\npm\npx.cmd -y @modelcontextprotocol/server-everything`, "@modelcontextprotocol/server-everything"},
		{`C:\Users\me\AppData\Roaming\npm\NPX.CMD -y @scope/pkg@1.2`, "@scope/pkg"},
		{"npx.cmd -y @upstash/context7-mcp@latest", "@upstash/context7-mcp"},
		{"npx.exe mcp-server-kubernetes", "mcp-server-kubernetes"},
		{"pnpm.cmd dlx @playwright/mcp", "@playwright/mcp"},
		{`C:\Users\me\.local\bin\uvx.exe mcp-server-fetch`, "mcp-server-fetch"},
		{`C:\Python312\python.exe C:\srv\weather\server.py`, "server.py"},
		{`node.exe C:\Users\me\weather\build\index.js`, "index.js"},
		{`node.exe C:\Users\me\AppData\Roaming\npm\node_modules\@scope\pkg\dist\index.js`, "@scope/pkg"},
		{`docker.exe run -i --rm mcp/fetch`, "mcp/fetch"},
		{`C:\tools\my-server.exe --port 3`, "my-server.exe"},
		{`C:\tools\npx.cmd -c echo`, "npx.cmd"},
		{`.cmd -y x`, ".cmd"},
		// Nothing that looks like a value, a URL or a secret becomes the name.
		{"npx https://user:pw@host/pkg.tgz", "npx"},
		{"uvx --from x token=abc", "uvx"},
		{"docker run -e SECRET=1 --rm", "docker"},
		{"node --api-key=secret", "node"},
	} {
		f := strings.Fields(tc.cmd)
		if got := RunName(f[0], f[1:]); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.cmd, got, tc.want)
		}
	}
	if got := (Spec{Name: "github", Command: "/usr/bin/npx", Args: []string{"-y", "x"}}).ServerName(); got != "github" {
		t.Errorf("a config server: %q, want its config name", got)
	}
}

// A long label keeps its command and its end (the script or package that
// tells servers apart), and never cuts a character in two.
func TestLabelElidesTheMiddle(t *testing.T) {
	long := Spec{Command: "/usr/bin/node", Args: []string{"/home/someone/" + strings.Repeat("très-long/", 12) + "server-memory/dist/index.js"}}
	l := long.Label()
	if n := len([]rune(l)); n != 80 || !strings.HasPrefix(l, "node /home/") || !strings.HasSuffix(l, "server-memory/dist/index.js") || !utf8.ValidString(l) || !strings.Contains(l, "…") {
		t.Fatalf("label %q (%d runes)", l, n)
	}
	if short := (Spec{Command: "/bin/srv", Args: []string{"-x"}}).Label(); short != "srv -x" {
		t.Fatalf("short label %q", short)
	}
	if win := (Spec{Command: `C:\Users\me\AppData\Roaming\npm\npx.cmd`, Args: []string{"-y", "pkg"}}).Label(); win != "npx.cmd -y pkg" {
		t.Fatalf("a Windows command's label %q", win)
	}
}

// What the orphan sweep takes for a server started through a launcher or
// an interpreter: those the naming rule reads through, not any command.
func TestLaunched(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"npx -y @modelcontextprotocol/server-everything", true},
		{"npm exec @modelcontextprotocol/server-everything", true},
		{"sh -c mcp-server-everything", true},
		{"node /srv/index.js", true},
		{"node -e setInterval(()=>{},1e6)", true}, // named node, launched all the same
		{"python3 -m mcp_server_time", true},
		{"uvx mcp-server-fetch", true},
		{"docker run -i --rm mcp/fetch", true},
		{`C:\Users\me\AppData\Roaming\npm\npx.cmd -y pkg`, true},
		{"npm start", false},
		{"npx", false},
		{"docker ps", false},
		{"sleep 600", false},
		{"/usr/local/bin/github-mcp-server stdio", false},
		{"", false},
	} {
		f := strings.Fields(tc.cmd)
		if len(f) == 0 {
			f = []string{""}
		}
		if got := Launched(f[0], f[1:]); got != tc.want {
			t.Errorf("Launched(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}
