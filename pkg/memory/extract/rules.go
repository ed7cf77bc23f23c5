// Package extract finds the entities a memory mentions and the relations
// between them, for build_graph. Rules is the default: deterministic, local,
// fast. LLM asks a language model through package llm; the memory family
// falls back to Rules when it fails, as the clarification planner does.
package extract

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// Extractor finds entities and relations in one memory's text.
type Extractor interface {
	// Name identifies the extractor and its version in build records.
	Name() string
	Extract(ctx context.Context, text string) (Result, error)
}

// Result is what an extractor found in one text. Every relation's ends are
// among Entities.
type Result struct {
	Entities  []store.Entity
	Relations []store.Relation
}

// The entity types Rules gives.
const (
	TypeURL        = "url"
	TypePath       = "path"
	TypeIdentifier = "identifier"
	TypeName       = "name"
)

// Rules is the deterministic extractor. What it finds, sentence by sentence:
//
//   - URLs (http and https), without trailing punctuation: type url;
//   - paths: a name with a slash that starts with /, ./, ../ or ~/, holds two
//     slashes, or ends in a file extension; and file names with a known
//     extension (main.go, README.md): type path;
//   - identifiers: text in backticks (up to three words), snake_case and
//     SCREAMING_SNAKE, camelCase and PascalCase with an inner capital
//     (searchNodes, PostgreSQL), dotted names (os.Getenv, store.Graph):
//     type identifier;
//   - capitalised names: runs of capitalised words or acronyms ("Alice
//     Smith", "New York", "AWS"), joined by of/de/van/von/der/la, with a
//     leading article dropped; a lone capitalised word opening a sentence
//     counts unless it is a common sentence opener (The, This, We, Today,
//     ...): type name;
//   - relations between two entities of one sentence joined only by a verb
//     phrase, in active voice: "X uses Y" (uses), "X depends on Y"
//     (depends_on), calls, imports, extends, implements, replaces, "runs
//     on" (runs_on), "is part of" (part_of), contains, owns, maintains,
//     "works at|for" (works_at), created ("wrote", "built"), "is a"
//     (is_a); "X uses Y and Z" relates X to both.
//
// What it misses: entities written in lower case ("the database"), pronouns
// and other references across sentences, passive voice ("Y is used by X"),
// relations phrased any other way, and negation beyond "not", "no longer",
// "never" (a sentence with those yields entities but no relation). A
// capitalised common word opening a sentence that is not in its list is
// taken for a name.
type Rules struct{}

// Name is the extractor's name and version.
func (Rules) Name() string { return "rules/1" }

// Extract never fails; ctx is only checked between sentences.
func (r Rules) Extract(ctx context.Context, text string) (Result, error) {
	var res Result
	seen := map[string]int{}
	seenRel := map[store.Relation]bool{}
	for _, sent := range sentences(text) {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		spans := findSpans(sent)
		for _, sp := range spans {
			if _, ok := seen[sp.name]; !ok {
				seen[sp.name] = len(res.Entities)
				res.Entities = append(res.Entities, store.Entity{Name: sp.name, Type: sp.typ, Observations: []string{}})
			}
		}
		for _, rel := range relations(sent, spans) {
			if !seenRel[rel] && rel.From != rel.To {
				seenRel[rel] = true
				res.Relations = append(res.Relations, rel)
			}
		}
	}
	return res, nil
}

// sentences cuts text at sentence ends (., ! or ? before a space) and line
// breaks. A dot inside a word (a file name, a version) does not end one.
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		end := -1
		switch {
		case c == '\n':
			end = i
		case (c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' || text[i+1] == '\t'):
			end = i
		}
		if end >= 0 {
			if s := strings.TrimSpace(text[start:end]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, strings.TrimRight(s, ".!?"))
	}
	return out
}

type span struct {
	start, end int
	name, typ  string
	prio       int
}

var (
	urlRE      = regexp.MustCompile(`https?://[^\s<>"'` + "`" + `)\]]+`)
	backtickRE = regexp.MustCompile("`([^`\n]{1,120})`")
	pathRE     = regexp.MustCompile(`(?:~|\.{1,2})?/?[\w.@+-]+(?:/[\w.@+-]+)+/?`)
	fileRE     = regexp.MustCompile(`\b[\w-]+\.(go|mod|sum|js|mjs|cjs|ts|tsx|jsx|py|rb|rs|java|kt|c|h|cc|cpp|hpp|cs|swift|php|sh|bash|zsh|sql|md|rst|txt|json|jsonl|yaml|yml|toml|ini|cfg|conf|xml|html|css|scss|lock|db|sqlite|csv|tsv|log|env|proto|tf|dockerfile)\b`)
	snakeRE    = regexp.MustCompile(`\b(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b`)
	camelRE    = regexp.MustCompile(`\b(?:[a-z]+[0-9]*[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b`)
	dottedRE   = regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]+)+(?:\(\))?`)
)

// Span priorities: where two overlap, the higher wins, then the longer.
const (
	prioName = iota
	prioIdent
	prioPath
	prioBacktick
	prioURL
)

func findSpans(s string) []span {
	var all []span
	addAll := func(re *regexp.Regexp, typ string, prio int, keep func(string) bool) {
		for _, m := range re.FindAllStringIndex(s, -1) {
			name := s[m[0]:m[1]]
			if keep == nil || keep(name) {
				all = append(all, span{m[0], m[1], name, typ, prio})
			}
		}
	}
	for _, m := range urlRE.FindAllStringIndex(s, -1) {
		name := strings.TrimRight(s[m[0]:m[1]], ".,;:!?")
		all = append(all, span{m[0], m[0] + len(name), name, TypeURL, prioURL})
	}
	for _, m := range backtickRE.FindAllStringSubmatchIndex(s, -1) {
		name := strings.TrimSpace(s[m[2]:m[3]])
		if name != "" && len(strings.Fields(name)) <= 3 {
			all = append(all, span{m[0], m[1], name, TypeIdentifier, prioBacktick})
		}
	}
	addAll(pathRE, TypePath, prioPath, isPath)
	addAll(fileRE, TypePath, prioPath, nil)
	addAll(snakeRE, TypeIdentifier, prioIdent, nil)
	addAll(camelRE, TypeIdentifier, prioIdent, nil)
	addAll(dottedRE, TypeIdentifier, prioIdent, func(n string) bool {
		parts := strings.Split(strings.TrimSuffix(n, "()"), ".")
		return !slices.ContainsFunc(parts, func(p string) bool { return len(p) < 2 })
	})
	all = append(all, names(s)...)
	// Longest, most specific first; a span overlapping one kept is dropped.
	slices.SortStableFunc(all, func(a, b span) int {
		if a.prio != b.prio {
			return b.prio - a.prio
		}
		return (b.end - b.start) - (a.end - a.start)
	})
	var kept []span
	for _, sp := range all {
		if !slices.ContainsFunc(kept, func(k span) bool { return sp.start < k.end && k.start < sp.end }) {
			kept = append(kept, sp)
		}
	}
	slices.SortFunc(kept, func(a, b span) int { return a.start - b.start })
	return kept
}

func isPath(p string) bool {
	switch {
	case strings.HasPrefix(p, "/"), strings.HasPrefix(p, "./"), strings.HasPrefix(p, "../"), strings.HasPrefix(p, "~/"):
		return len(p) > 2
	case strings.Count(p, "/") >= 2:
		return true
	}
	return fileRE.MatchString(p[strings.LastIndexByte(p, '/')+1:])
}

// openers are capitalised words that open sentences without naming anything.
var openers = setOf(`a an the this that these those it its i we you he she they our my your their his her
	if when while but and or so then thus also however therefore still yet now today yesterday tomorrow
	in on at for from to with by after before during since until about as of over under into
	there here what which who whom whose why how where all some any each every no not none
	please note remember use run add make set see check fix try do does did is are was were be been
	let maybe perhaps always never sometimes usually first next last finally one two three
	monday tuesday wednesday thursday friday saturday sunday
	january february march april may june july august september october november december`)

// joiners may stand between the capitalised words of one name.
var joiners = setOf(`of de van von der la du di da del`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

type word struct {
	start, end int
	text       string
}

func wordsOf(s string) []word {
	var out []word
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			i += n
			continue
		}
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-' && r != '&' {
				break
			}
			j += n
		}
		out = append(out, word{i, j, strings.TrimRight(s[i:j], "'-&")})
		i = j
	}
	return out
}

func capitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// names finds runs of capitalised words.
func names(s string) []span {
	ws := wordsOf(s)
	var out []span
	for i := 0; i < len(ws); {
		if !capitalised(ws[i].text) {
			i++
			continue
		}
		j := i + 1
		for j < len(ws) {
			gap := s[ws[j-1].end:ws[j].start]
			if strings.TrimSpace(gap) != "" { // punctuation ends a name
				break
			}
			if capitalised(ws[j].text) {
				j++
				continue
			}
			if joiners[ws[j].text] && j+1 < len(ws) && capitalised(ws[j+1].text) && strings.TrimSpace(s[ws[j].end:ws[j+1].start]) == "" {
				j += 2
				continue
			}
			break
		}
		first := i
		for first < j && openers[strings.ToLower(ws[first].text)] {
			first++
		}
		if first < j {
			out = append(out, span{ws[first].start, ws[j-1].end, s[ws[first].start:ws[j-1].end], TypeName, prioName})
		}
		i = j
	}
	return out
}

// verbs maps the verb phrases Rules reads between two entities to the
// relation type they make.
var verbs = []struct {
	re  *regexp.Regexp
	typ string
}{
	{regexp.MustCompile(`^(?:uses|use|used|is using|are using|was using|relies on|rely on)$`), "uses"},
	{regexp.MustCompile(`^(?:depends on|depend on|depended on|requires|require|needs|need)$`), "depends_on"},
	{regexp.MustCompile(`^(?:calls|call|called|invokes|invoke)$`), "calls"},
	{regexp.MustCompile(`^(?:imports|import|imported)$`), "imports"},
	{regexp.MustCompile(`^(?:extends|extend|extended|inherits from)$`), "extends"},
	{regexp.MustCompile(`^(?:implements|implement|implemented)$`), "implements"},
	{regexp.MustCompile(`^(?:replaces|replace|replaced|supersedes)$`), "replaces"},
	{regexp.MustCompile(`^(?:runs on|run on|ran on|is hosted on|is deployed (?:on|to)|is deployed on|deploys to)$`), "runs_on"},
	{regexp.MustCompile(`^(?:is part of|are part of|belongs to|belong to)$`), "part_of"},
	{regexp.MustCompile(`^(?:contains|contain|includes|include)$`), "contains"},
	{regexp.MustCompile(`^(?:owns|own|owned)$`), "owns"},
	{regexp.MustCompile(`^(?:maintains|maintain|maintained)$`), "maintains"},
	{regexp.MustCompile(`^(?:works at|works for|worked at|worked for|joined|is employed by)$`), "works_at"},
	{regexp.MustCompile(`^(?:wrote|created|built|authored|designed)$`), "created"},
	{regexp.MustCompile(`^(?:is an?|are)$`), "is_a"},
}

var (
	adverbs   = regexp.MustCompile(`\b(?:now|also|still|mostly|already|currently|only|heavily|directly)\b`)
	articles  = regexp.MustCompile(`\s+(?:the|a|an)$`)
	negations = regexp.MustCompile(`\b(?:not|no longer|never|doesn't|don't|didn't|isn't|aren't|won't|cannot|can't)\b`)
	listGlue  = regexp.MustCompile(`^(?:,|and|or|, and|, or|&)$`)
)

// relations reads the verb phrase between consecutive entities of a sentence.
func relations(s string, spans []span) []store.Relation {
	var out []store.Relation
	var last store.Relation // the relation a list ("X uses Y and Z") continues
	for i := 1; i < len(spans); i++ {
		a, b := spans[i-1], spans[i]
		between := strings.ToLower(strings.TrimSpace(s[a.end:b.start]))
		if last.Type != "" && listGlue.MatchString(between) {
			out = append(out, store.Relation{From: last.From, To: b.name, Type: last.Type})
			continue
		}
		last = store.Relation{}
		if negations.MatchString(between) {
			continue
		}
		phrase := strings.Join(strings.Fields(adverbs.ReplaceAllString(between, "")), " ")
		phrase = articles.ReplaceAllString(phrase, "")
		for _, v := range verbs {
			if v.re.MatchString(phrase) {
				last = store.Relation{From: a.name, To: b.name, Type: v.typ}
				out = append(out, last)
				break
			}
		}
	}
	return out
}
