package sim

import (
	"strconv"
	"testing"
)

// plainDecimalRef is the definition luaDecimal reads by: 0, or a decimal
// of up to 15 digits without a leading zero.
func plainDecimalRef(s string) bool {
	if s == "" || len(s) > 15 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// TestLuaDecimal compares luaDecimal's one pass with its definition (an
// optional minus sign and a plain decimal, read by strconv) on edge cases:
// signs, leading zeros, 15 and 16 digits, bytes around the digits.
func TestLuaDecimal(t *testing.T) {
	cases := []string{"", "-", "0", "-0", "00", "01", "-01", "7", "-7", "10", "1767225609009",
		"-1767225609009", "999999999999999", "-999999999999999", "1000000000000000", "+1",
		"1.5", "1e3", " 1", "1 ", "0x10", "/", ":", "12/4", "12:4", "--1", "1-", "٣"}
	for _, s := range cases {
		got, ok := luaDecimal(s)
		d := s
		if len(d) > 0 && d[0] == '-' {
			d = d[1:]
		}
		want, wantOK := 0.0, plainDecimalRef(d)
		if wantOK {
			n, err := strconv.ParseInt(d, 10, 64)
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			if d != s {
				n = -n
			}
			want = float64(n)
		}
		if ok != wantOK || got != want {
			t.Errorf("luaDecimal(%q) = %v, %v; want %v, %v", s, got, ok, want, wantOK)
		}
	}
}
