package route

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// What an upstream's answers must look like before hearth keeps them and
// answers other clients with them: its initialize result, the pages of its
// lists, and so a catalog entry made of them. The same checks serve the
// live path (an upstream's answer) and the catalog read from disk
// (CheckCatalog), so an entry is answered from only when the live path
// would have taken what it holds.

// checkInitResult validates a 2025 upstream's initialize result as MCP's
// InitializeResult: an object with a protocolVersion string, a
// capabilities object and a serverInfo object with a name.
func checkInitResult(result json.RawMessage) error {
	o, ok := decodeObject(result)
	if !ok {
		return fmt.Errorf("its initialize result is not an object: %s", shortText(result))
	}
	var version string
	if json.Unmarshal(o["protocolVersion"], &version) != nil || version == "" {
		return fmt.Errorf("its initialize result has no protocolVersion string")
	}
	if _, ok := decodeObject(o["capabilities"]); !ok {
		return fmt.Errorf("its initialize result has no capabilities object")
	}
	info, ok := decodeObject(o["serverInfo"])
	var name string
	if !ok || json.Unmarshal(info["name"], &name) != nil {
		return fmt.Errorf("its initialize result has no serverInfo object with a name")
	}
	return nil
}

// checkDiscover validates an upstream's DiscoverResult: supportedVersions
// (strings) must name 2026-07-28, capabilities must be an object.
func checkDiscover(result json.RawMessage) error {
	o, ok := decodeObject(result)
	if !ok {
		return fmt.Errorf("its server/discover result is not an object: %.80s", result)
	}
	var versions []string
	if json.Unmarshal(o["supportedVersions"], &versions) != nil || versions == nil {
		return fmt.Errorf("its server/discover result has no supportedVersions list of strings")
	}
	if !slices.Contains(versions, modernVersion) {
		return fmt.Errorf("it supports %s, and hearth speaks %s to upstreams", strings.Join(versions, ", "), modernVersion)
	}
	if _, ok := decodeObject(o["capabilities"]); !ok {
		return fmt.Errorf("its server/discover result has no capabilities object")
	}
	return nil
}

// listMember is the array each catalogued list's result holds.
var listMember = map[string]string{
	"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates",
}

// checkPage validates one page of a catalogued list: an object whose list
// member is an array of objects, and whose nextCursor, when present, is a
// string.
func checkPage(method string, page json.RawMessage) error {
	member, ok := listMember[method]
	if !ok {
		return fmt.Errorf("%s is no list hearth catalogues", method)
	}
	o, ok := decodeObject(page)
	if !ok {
		return fmt.Errorf("a page of its %s is not an object: %s", method, shortText(page))
	}
	var items []json.RawMessage
	if json.Unmarshal(o[member], &items) != nil || items == nil {
		return fmt.Errorf("a page of its %s has no %s array", method, member)
	}
	for _, it := range items {
		if _, ok := decodeObject(it); !ok {
			return fmt.Errorf("a page of its %s holds %s, not an object", method, shortText(it))
		}
	}
	if c, ok := o["nextCursor"]; ok && !isNull(c) {
		var s string
		if json.Unmarshal(c, &s) != nil {
			return fmt.Errorf("a page of its %s has a nextCursor that is no string", method)
		}
	}
	return nil
}

// CheckCatalog validates a catalog as the live path validates what an
// upstream sends: its initialize result (or a 2026-07-28 upstream's
// DiscoverResult), every page of every list, and that its text is valid
// UTF-8 (a frame of the upstream's that is not is no JSON-RPC message). A
// catalog that fails is not answered from: the server starts live.
func CheckCatalog(c Catalog) error {
	for _, part := range [][]byte{c.InitParams, c.InitResult, c.Discover, c.ListCaps} {
		if !utf8.Valid(part) {
			return fmt.Errorf("it holds text that is not valid UTF-8")
		}
	}
	if c.InitParams == nil {
		return fmt.Errorf("it holds no initialize params")
	}
	if _, ok := decodeObject(c.InitParams); !ok {
		return fmt.Errorf("its initialize params are not an object")
	}
	switch {
	case c.Discover != nil:
		if err := checkDiscover(c.Discover); err != nil {
			return err
		}
	case c.InitResult != nil:
		if err := checkInitResult(c.InitResult); err != nil {
			return err
		}
	default:
		return fmt.Errorf("it holds neither an initialize result nor a DiscoverResult")
	}
	for method, pages := range c.Lists {
		if len(pages) == 0 || len(pages) > maxCatalogPages {
			return fmt.Errorf("its %s has %d pages", method, len(pages))
		}
		for _, p := range pages {
			if !utf8.Valid(p) {
				return fmt.Errorf("a page of its %s is not valid UTF-8", method)
			}
			if err := checkPage(method, p); err != nil {
				return err
			}
		}
	}
	return nil
}
