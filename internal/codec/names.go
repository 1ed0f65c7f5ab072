package codec

import (
	"fmt"
	"strconv"
	"strings"
)

// String returns the algorithm's name as Parse accepts it: "none", "lz4",
// "zstd", "deflate" or "snappy", and "ID(n)" for an unknown ID.
func (id ID) String() string {
	switch id {
	case None:
		return "none"
	case LZ4:
		return "lz4"
	case Zstd:
		return "zstd"
	case Deflate:
		return "deflate"
	case Snappy:
		return "snappy"
	case ZstdDict:
		return "zstd+dict"
	}
	return "ID(" + strconv.Itoa(int(id)) + ")"
}

// lz4HCDefaultLevel is the level that "lz4hc" without a level selects, as
// LZ4HC_CLEVEL_DEFAULT does in the reference implementation.
const lz4HCDefaultLevel = 9

// name returns the Codec.String of a codec, in the form Parse reads back: the
// algorithm alone for the default level, otherwise "name-level", where LZ4
// with a level is named "lz4hc" because it is the HC compressor.
func name(id ID, level int) string {
	switch {
	case level == 0:
		return id.String()
	case id == LZ4:
		return "lz4hc-" + strconv.Itoa(level)
	}
	return id.String() + "-" + strconv.Itoa(level)
}

// Parse returns the codec that s names: an algorithm, "none", "lz4",
// "lz4hc", "zstd", "deflate" (or its alias "zlib") or "snappy", optionally
// followed by "-level", as in "zstd-19", "lz4hc-9" (also "lz4-9") or
// "deflate-6". Without a level the codec uses its default, except that
// "lz4hc" means "lz4hc-9". Case is ignored. Parse accepts what Codec.String
// returns, except for a codec with a dictionary (WithDict), which no name
// can make.
//
// The level, when given, must lie in the range New accepts; in particular an
// explicit level 0 is refused rather than read as "default", since zlib users
// would expect it to mean "store".
func Parse(s string) (Codec, error) {
	algo, levelStr, hasLevel := strings.Cut(strings.ToLower(s), "-")
	level := 0
	if hasLevel {
		n, err := parseLevel(levelStr)
		if err != nil {
			return nil, fmt.Errorf("parsing codec %q: %w", s, err)
		}
		level = n
	}
	var id ID
	switch algo {
	case "none":
		id = None
	case "lz4":
		id = LZ4
	case "lz4hc":
		id = LZ4
		if !hasLevel {
			level = lz4HCDefaultLevel
		}
	case "zstd":
		id = Zstd
	case "deflate", "zlib":
		id = Deflate
	case "snappy":
		id = Snappy
	default:
		return nil, fmt.Errorf("parsing codec %q: %w %q", s, ErrUnknown, algo)
	}
	c, err := New(id, level)
	if err != nil {
		return nil, fmt.Errorf("parsing codec %q: %w", s, err)
	}
	return c, nil
}

// parseLevel parses an explicit level: a positive decimal number.
func parseLevel(s string) (int, error) {
	n, err := strconv.Atoi(s)
	// Atoi accepts a sign, which would make "zstd-+3" valid.
	if err != nil || n < 1 || s[0] == '+' {
		return 0, fmt.Errorf("%w: level %q is not a positive number", ErrLevel, s)
	}
	return n, nil
}
