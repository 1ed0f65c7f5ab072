package server

// Glob patterns as Redis's stringmatchlen reads them (SCAN MATCH, CONFIG
// GET): '*' any run of bytes, '?' any one byte, '[abc]', '[^abc]', '[a-z]'
// a byte in (or not in) the class, '\x' the byte x. Case-sensitive.
//
// Redis matches '*' by recursion, which takes exponential time on patterns
// such as "*a*a*a*a*b" (a client could stall the server with one). Here
// every token but '*' matches exactly one byte, so the classic greedy
// matcher that backtracks only to the last '*' is exact and takes
// O(len(pattern) × len(s)).

// globMatch reports whether s matches pattern.
func globMatch(pattern, s []byte) bool {
	p, i := 0, 0
	starP, starI := -1, 0 // the last '*' seen, and where its match ends
	for i < len(s) {
		if p < len(pattern) && pattern[p] == '*' {
			starP, starI = p, i
			p++
			continue
		}
		if p < len(pattern) {
			if ok, next := matchOne(pattern, p, s[i]); ok {
				p, i = next, i+1
				continue
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last '*' take one more byte and retry after it.
		starI++
		p, i = starP+1, starI
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchOne matches the token at pattern[p] (not '*') against c and returns
// whether it matched and where the next token starts.
func matchOne(pattern []byte, p int, c byte) (bool, int) {
	switch pattern[p] {
	case '?':
		return true, p + 1
	case '[':
		return matchClass(pattern, p+1, c)
	case '\\':
		if p+1 < len(pattern) {
			return pattern[p+1] == c, p + 2
		}
		return c == '\\', p + 1
	default:
		return pattern[p] == c, p + 1
	}
}

// matchClass matches a class whose body starts at pattern[p] (after '[').
// An unterminated class runs to the end of the pattern, as in Redis.
func matchClass(pattern []byte, p int, c byte) (bool, int) {
	neg := p < len(pattern) && pattern[p] == '^'
	if neg {
		p++
	}
	match := false
	for p < len(pattern) && pattern[p] != ']' {
		switch {
		case pattern[p] == '\\' && p+1 < len(pattern):
			if pattern[p+1] == c {
				match = true
			}
			p += 2
		case p+2 < len(pattern) && pattern[p+1] == '-':
			lo, hi := pattern[p], pattern[p+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			if lo <= c && c <= hi {
				match = true
			}
			p += 3
		default:
			if pattern[p] == c {
				match = true
			}
			p++
		}
	}
	if p < len(pattern) {
		p++ // the ']'
	}
	return match != neg, p
}

// globPrefix returns the literal bytes every match of pattern starts with.
func globPrefix(pattern []byte) []byte {
	var out []byte
	for p := 0; p < len(pattern); p++ {
		switch c := pattern[p]; c {
		case '*', '?', '[':
			return out
		case '\\':
			if p+1 < len(pattern) {
				p++
				out = append(out, pattern[p])
			} else {
				out = append(out, c)
			}
		default:
			out = append(out, c)
		}
	}
	return out
}
