package workspace

import (
	"fmt"
	"regexp"
	"strings"
)

// compileGlob turns search's path_glob into a matcher of repository-relative
// slash paths. The syntax is the one people know from .gitignore and
// ripgrep's --glob:
//
//   - any run of characters except '/'
//     ?       one character except '/'
//     **      any run of characters including '/' ("**/" also matches nothing)
//     [abc]   one of the characters; [!abc] or [^abc] none of them; ranges a-z
//     {a,b}   either alternative (alternatives may hold globs, not nested braces)
//     \x      the character x itself
//
// A glob without '/' matches a file's base name in any directory ("*.go"); a
// glob with '/' matches the whole path from the repository root (a leading
// '/' is allowed and ignored). Matching is case-sensitive, like paths.
func compileGlob(glob string) (func(string) bool, error) {
	if glob == "" {
		return nil, fmt.Errorf("path_glob is empty")
	}
	if strings.ContainsRune(glob, 0) {
		return nil, fmt.Errorf("path_glob contains a NUL byte")
	}
	base := !strings.Contains(strings.TrimPrefix(glob, "/"), "/")
	g := strings.TrimPrefix(glob, "/")
	expr, err := globRegexp(g, false)
	if err != nil {
		return nil, fmt.Errorf("path_glob %q: %v", glob, err)
	}
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		return nil, fmt.Errorf("path_glob %q: %v", glob, err)
	}
	if base {
		return func(p string) bool { return re.MatchString(p[strings.LastIndexByte(p, '/')+1:]) }, nil
	}
	return re.MatchString, nil
}

// globRegexp translates one glob (or one brace alternative, inBrace) to RE2
// syntax.
func globRegexp(g string, inBrace bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch c {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				i++
				// "**/" may match no directory at all; "**" elsewhere matches anything.
				if i+1 < len(g) && g[i+1] == '/' && (i == 1 || g[i-2] == '/') {
					i++
					b.WriteString(`(?:.*/)?`)
				} else {
					b.WriteString(`.*`)
				}
			} else {
				b.WriteString(`[^/]*`)
			}
		case '?':
			b.WriteString(`[^/]`)
		case '\\':
			if i+1 == len(g) {
				return "", fmt.Errorf("it ends with a lone backslash")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(g[i])))
		case '[':
			end, class, err := globClass(g, i)
			if err != nil {
				return "", err
			}
			b.WriteString(class)
			i = end
		case '{':
			if inBrace {
				return "", fmt.Errorf("braces cannot be nested")
			}
			end := strings.IndexByte(g[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("a '{' at offset %d is never closed", i)
			}
			alts := strings.Split(g[i+1:i+end], ",")
			b.WriteString("(?:")
			for k, a := range alts {
				if k > 0 {
					b.WriteByte('|')
				}
				expr, err := globRegexp(a, true)
				if err != nil {
					return "", err
				}
				b.WriteString(expr)
			}
			b.WriteString(")")
			i += end
		case '}':
			return "", fmt.Errorf("a '}' at offset %d has no '{'", i)
		default:
			// Copy one whole UTF-8 sequence, quoted.
			j := i + 1
			for j < len(g) && g[j]&0xC0 == 0x80 {
				j++
			}
			b.WriteString(regexp.QuoteMeta(g[i:j]))
			i = j - 1
		}
	}
	return b.String(), nil
}

// globClass translates the bracket expression starting at g[start] and
// returns the index of its closing ']'.
func globClass(g string, start int) (int, string, error) {
	i := start + 1
	var b strings.Builder
	b.WriteByte('[')
	if i < len(g) && (g[i] == '!' || g[i] == '^') {
		b.WriteByte('^')
		i++
	}
	first := true
	for ; i < len(g); i++ {
		c := g[i]
		if c == ']' && !first {
			if b.Len() == 1 || b.String() == "[^" {
				return 0, "", fmt.Errorf("the class at offset %d is empty", start)
			}
			if b.String()[1] == '^' {
				b.WriteString("/") // a negated class never matches the separator
			}
			b.WriteByte(']')
			return i, b.String(), nil
		}
		first = false
		switch c {
		case '\\':
			if i+1 == len(g) {
				return 0, "", fmt.Errorf("it ends with a lone backslash")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(g[i])))
		case '-':
			b.WriteByte('-')
		case '[', ']', '^':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return 0, "", fmt.Errorf("a '[' at offset %d is never closed", start)
}
