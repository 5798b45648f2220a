package sim

// matchGlob reports whether s matches the glob pattern as Redis matches
// KEYS, SCAN MATCH and PUBSUB CHANNELS patterns (its stringmatchlen, case
// sensitive): * any run of bytes, ? one byte, [abc], [^abc] and [a-z]
// (ends in either order) one byte of a class, \ the next byte itself. An
// unclosed class ends at the pattern's end; a pattern nested more than
// 1,000 stars deep matches nothing. TestMatchGlobAsRedis holds it to a
// redis-server's KEYS.
func matchGlob(pattern, s string) bool {
	skip := false
	return globFrom(pattern, s, &skip, 0)
}

// globFrom is matchGlob from one position of a star's search. skip is
// set once the pattern's rest has been found nowhere in the string: an
// earlier star then cannot match either (as Redis, which stops there).
func globFrom(p, s string, skip *bool, nesting int) bool {
	if nesting > 1000 {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			return globStar(p, s, skip, nesting)
		case '?':
			s = s[1:]
		case '[':
			var ok bool
			if p, ok = globClass(p, s[0]); !ok {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// globStar matches s against p, which starts with a star: the pattern's
// rest from every position of s on.
func globStar(p, s string, skip *bool, nesting int) bool {
	for len(p) > 1 && p[1] == '*' {
		p = p[1:]
	}
	if len(p) == 1 {
		return true
	}
	for ; len(s) > 0; s = s[1:] {
		if globFrom(p[1:], s, skip, nesting+1) {
			return true
		}
		if *skip {
			return false
		}
	}
	*skip = true
	return false
}

// globClass matches byte b against the class that starts p (at its '['),
// and returns p from the class's last byte on: its ']', or the pattern's
// last byte if the class is not closed (where Redis steps back to).
func globClass(p string, b byte) (string, bool) {
	i := 1
	not := i < len(p) && p[i] == '^'
	if not {
		i++
	}
	match := false
	for ; ; i++ {
		switch {
		case i >= len(p):
			return p[len(p)-1:], match != not
		case p[i] == '\\' && len(p)-i >= 2:
			i++
			match = match || p[i] == b
		case p[i] == ']':
			return p[i:], match != not
		case len(p)-i >= 3 && p[i+1] == '-':
			lo, hi := p[i], p[i+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			match = match || (lo <= b && b <= hi)
			i += 2
		default:
			match = match || p[i] == b
		}
	}
}
