package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/alicebob/miniredis/v2/server"
)

// TestParseReply compares parseReply with server.ParseReply on every reply
// type, nested arrays, nil and empty values, binary bulk strings, errors
// inside arrays, and malformed or RESP3 input (handed over to ParseReply).
func TestParseReply(t *testing.T) {
	for _, in := range []string{
		"+OK\r\n", "+\r\n", "-ERR wrong\r\n", "-NOSCRIPT No matching script. Please use EVAL.\r\n",
		":0\r\n", ":-12\r\n", ":9223372036854775807\r\n", ":\r\n", ":x\r\n",
		"$5\r\nhello\r\n", "$0\r\n\r\n", "$-1\r\n", "$4\r\na\r\nb\r\n", "$9\r\nshort\r\n", "$x\r\n",
		"*0\r\n", "*-1\r\n", "*2\r\n$1\r\na\r\n:3\r\n", "*2\r\n*1\r\n+OK\r\n$-1\r\n",
		"*2\r\n-ERR inner\r\n:1\r\n", "*3\r\n:1\r\n", "*x\r\n",
		"_\r\n", "%1\r\n+a\r\n+b\r\n", ",1.5\r\n", "\r\n", "+OK\n", "+OK", "",
	} {
		want, wantErr := server.ParseReply(bufio.NewReader(bytes.NewReader([]byte(in))))
		got, gotErr := parseReply([]byte(in))
		if !reflect.DeepEqual(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%q: got %#v, %v; ParseReply gives %#v, %v", in, got, gotErr, want, wantErr)
		}
	}
}
