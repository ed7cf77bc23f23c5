// Command rawping sends one ping to a hearth socket and prints the reply, or
// "closed" if the daemon hangs up. The peer-check test runs it as another user.
//
// rawping -listen PATH is the other side: a server of another user's on
// PATH that accepts, reads what each client sends for a second, and prints
// "read N bytes"; the test that `hearthd status` refuses such a server runs
// it, to see that nothing was sent.
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-listen" {
		listen(os.Args[2])
		return
	}
	c, err := net.Dial("unix", os.Args[1])
	if err != nil {
		fmt.Println("dial failed:", err)
		os.Exit(1)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintln(c, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	sc := bufio.NewScanner(c)
	if sc.Scan() {
		fmt.Println(sc.Text())
		return
	}
	fmt.Println("closed")
}

func listen(path string) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		fmt.Println("listen failed:", err)
		os.Exit(1)
	}
	os.Chmod(path, 0o666)
	fmt.Println("ready")
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		n, _ := io.Copy(io.Discard, c)
		fmt.Printf("read %d bytes\n", n)
		c.Close()
	}
}
