package remote_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/hearth-mcp/hearth/pkg/oauth"
	"github.com/hearth-mcp/hearth/pkg/oauth/oauthtest"
	"github.com/hearth-mcp/hearth/pkg/remote"
	"github.com/hearth-mcp/hearth/pkg/secret"
)

// A remote server behind OAuth as a hosted upstream: the vault keeps the
// grant, the Manager owns the token family, and the Conn takes frames as a
// child's stdin would and gives them back one per line as its stdout. A
// hosted instance starts it where it would start a process:
// router.Up(conn), conn.Stdout() read as the child's stdout, conn.Done()
// watched as its exit.
func ExampleDial() {
	as := oauthtest.New(oauthtest.Options{}) // an authorization server and its MCP server
	defer as.Close()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	vault, _ := secret.Open(secret.Options{Dir: dir, Backend: secret.File})
	m, _ := oauth.New(oauth.Config{
		Name: "example", Server: as.URL(), Store: vault,
		Open:       oauthtest.Browser, // the daemon: opener.Open with opener.Command(open_url, $HEARTH_OPEN_URL, GOOS)
		AutoSignIn: true,              // the daemon: false, and `hearthd login example` calls m.SignIn
	})
	conn, _ := remote.Dial(remote.Options{URL: as.URL(), Name: "example", Auth: m})
	defer conn.Close()

	out := bufio.NewScanner(conn.Stdout())
	conn.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), "")
	out.Scan()
	var answer struct {
		ID     int `json:"id"`
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	json.Unmarshal(out.Bytes(), &answer)
	fmt.Println(answer.ID, answer.Result.Tools[0].Name, m.Status().State, m.SignIns())
	// Output: 1 echo signed-in 1
}
