// Package jsondiff computes the RFC 6902 JSON Patch that turns one JSON document
// into another, with these deterministic rules:
//
//   - only "add", "remove" and "replace" operations;
//   - object members are compared key by key, in sorted key order (a
//     duplicated key counts once, with its last value, as encoding/json reads
//     it);
//   - an array that differs in any way is replaced whole by one "replace";
//   - a change of type, or of a scalar, at the root is one "replace" at path "";
//   - operations are sorted by path (byte order of the RFC 6901 pointer) and, on
//     equal paths, "remove" < "add" < "replace";
//   - null values are kept: an "add" or "replace" always carries "value", even
//     when it is null, and a "remove" never does.
//
// # Why sorting never breaks the patch
//
// The diff only descends into a member when it is an object on both sides, and
// then emits nothing for the member itself; everything else (a removed, added
// or changed member, a differing array, a type change) is one operation on that
// member's location, carrying the whole new subtree. So no two operations touch
// the same location, no operation's path is a prefix of another's, and every
// operation's parent object exists, unchanged in kind, before and after the
// patch. Operations on disjoint locations commute: any order, including the
// sorted one, applies cleanly and yields the new document.
//
// # Equality
//
// Two values are equal when [jsonval.Equal] says so: objects with the same
// members (order does not matter), arrays with equal elements in the same
// order, strings with the same characters after unescaping, and numbers with
// the same numeric value, compared exactly on their decimal text (so 1, 1.0
// and 1e0 are equal, as RFC 6902 §4.6 defines for "test"; 9007199254740993 and
// 9007199254740992 are not, however large the integers). true is not 1.
//
// # Input
//
// [Diff] works on [jsonval] documents, the form hearth decodes every frame
// into, so a tool diffs its arguments where they lie. Values in the patch are
// the new document's own text, compacted, when the document keeps its text
// ([jsonval.ParseRaw], as frames are decoded). [DiffJSON] decodes text first,
// with [jsonval.ParseRaw], and requires it to be UTF-8.
package jsondiff
