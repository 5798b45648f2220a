package sim

import (
	"fmt"
	"testing"
)

// TestArgvCommandsDoNotOverlap: the commands a client's argv cuts from its
// slabs each have the length and capacity asked (an append copies), and
// none is written by another: each still holds what was written into it
// after many more were cut and written, across slabs and for commands too
// long to share one.
func TestArgvCommandsDoNotOverlap(t *testing.T) {
	c := &Client{}
	var cmds [][]string
	for i := range 2000 {
		n := 1 + i%(argvSlab/8+3) // now and then one longer than a slab shares
		cmd := c.argv(n)
		if len(cmd) != n || cap(cmd) != n {
			t.Fatalf("argv(%d): length %d, capacity %d", n, len(cmd), cap(cmd))
		}
		for j := range cmd {
			cmd[j] = fmt.Sprint(i, ":", j)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		for j, s := range cmd {
			if want := fmt.Sprint(i, ":", j); s != want {
				t.Fatalf("command %d's argument %d reads %q, want %q", i, j, s, want)
			}
		}
	}
}
