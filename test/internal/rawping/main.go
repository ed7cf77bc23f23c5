// Command rawping sends one ping to a hearth socket and prints the reply, or
// "closed" if the daemon hangs up. The peer-check test runs it as another user.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
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
