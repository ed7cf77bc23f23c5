package test

import "slices"

// asHearthLists is how hearth lists the tools a server lists: in order of
// name, whatever order the server wrote them in, so that every session's
// list is the same bytes (docs/decisions/0073-caching-hints-and-order.md).
// A test comparing a list through hearth with one from the server itself
// compares it with this.
func asHearthLists(direct []string) []string {
	return slices.Sorted(slices.Values(direct))
}
