package daemon

import (
	"crypto/sha256"
	"encoding/json"
)

// served fingerprints what clients list: the tool definitions, and the
// resources with their content. A reload that changes either is announced
// to every client (mcp.Server.ListChanged); one that changes nothing is not.
type served struct{ tools, resources [sha256.Size]byte }

func (d *Daemon) served() served {
	var out served
	h := sha256.New()
	for _, e := range d.reg.List() {
		b, _ := json.Marshal(e.Definition())
		h.Write(b)
		h.Write([]byte{0})
	}
	copy(out.tools[:], h.Sum(nil))
	h.Reset()
	for _, rp := range d.reg.ResourceProviders() {
		for _, r := range rp.Resources() {
			b, _ := json.Marshal(r)
			h.Write(b)
			// A resource whose text changed is stale in a client's cache
			// too: the list-changed notification is the only invalidation
			// hearth sends for it.
			text, mime, _ := rp.ReadResource(r.URI)
			h.Write([]byte{0})
			h.Write([]byte(mime))
			h.Write([]byte{0})
			h.Write([]byte(text))
			h.Write([]byte{0})
		}
	}
	copy(out.resources[:], h.Sum(nil))
	return out
}
