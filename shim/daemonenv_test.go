package shim

import (
	"strings"
	"testing"
)

// On Windows the autostarted daemon gets the same base, places and
// switches as on Unix, matched case-blind as Windows matches names, plus
// the system's own variables, without which it could not open a socket;
// a client's secret still stays behind (decision 0042).
func TestDaemonEnvOnWindows(t *testing.T) {
	env := daemonEnvOn("windows", []string{
		"=C:=C:\\work", "Path=C:\\Windows;C:\\bin", "SystemRoot=C:\\Windows", "windir=C:\\Windows", "ComSpec=C:\\Windows\\system32\\cmd.exe",
		"PATHEXT=.COM;.EXE;.CMD", "USERPROFILE=C:\\Users\\me", "LOCALAPPDATA=C:\\Users\\me\\AppData\\Local", "APPDATA=C:\\Users\\me\\AppData\\Roaming",
		"TEMP=C:\\Users\\me\\AppData\\Local\\Temp", "TMP=C:\\T", "USERNAME=me", "ProgramFiles=C:\\Program Files", "ProgramFiles(x86)=C:\\PF86",
		"GITHUB_TOKEN=A", "OPENAI_API_KEY=k", "HEARTH_IDLE_TIMEOUT=1h", "Hearth_Home=D:\\h", "https_proxy=http://p:3128",
		"HEARTH_PORTABLE=1", "SESSIONNAME=Console", "HEARTH_AUTOSTARTED=0", "ELECTRON_RUN_AS_NODE=1",
	})
	got := strings.Join(env, " ")
	want := "Path=C:\\Windows;C:\\bin SystemRoot=C:\\Windows windir=C:\\Windows ComSpec=C:\\Windows\\system32\\cmd.exe " +
		"PATHEXT=.COM;.EXE;.CMD USERPROFILE=C:\\Users\\me LOCALAPPDATA=C:\\Users\\me\\AppData\\Local APPDATA=C:\\Users\\me\\AppData\\Roaming " +
		"TEMP=C:\\Users\\me\\AppData\\Local\\Temp TMP=C:\\T USERNAME=me ProgramFiles=C:\\Program Files ProgramFiles(x86)=C:\\PF86 " +
		"Hearth_Home=D:\\h https_proxy=http://p:3128 HEARTH_PORTABLE=1 HEARTH_AUTOSTARTED=1"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Unix's names are exact: a "Path" there is not PATH.
	if got := strings.Join(daemonEnvOn("linux", []string{"Path=/x", "PATH=/bin", "SystemRoot=C:\\Windows"}), " "); got != "PATH=/bin HEARTH_AUTOSTARTED=1" {
		t.Fatalf("linux: %s", got)
	}
}

func TestDaemonName(t *testing.T) {
	for goos, want := range map[string]string{"windows": "hearthd.exe", "linux": "hearthd", "darwin": "hearthd"} {
		if got := daemonName(goos); got != want {
			t.Errorf("%s: %q, want %q", goos, got, want)
		}
	}
}
