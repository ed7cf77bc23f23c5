package route

// A drain waits for what a hosted client has in flight to be answered
// (docs/decisions/0046-upstream-handover.md): the client's session ends
// once the router has written its last reply.

// WhenSettled calls fn once the client has no request pending (Pending is
// 0: in flight upstream, queued, or its initialize waiting), with every
// reply written to its peer: at once if it has none, else after the
// router's lock is released on the change that answered the last. fn runs
// without the router's lock. A client that goes away first never calls it.
func (c *Client) WhenSettled(fn func()) {
	r := c.r
	r.mu.Lock()
	if c.gone || c.settled != nil {
		r.unlock()
		return
	}
	c.settled = fn
	r.clients.settling++
	r.unlock() // calls fn now if nothing is pending
}

// settledLocked takes the waiting clients' callbacks whose clients have
// nothing pending any more, or are gone; r.mu is held.
func (r *Router) settledLocked() []func() {
	var out []func()
	for c := range r.clients.set {
		if c.settled != nil && c.pendingLocked() == 0 {
			out = append(out, c.settled)
			c.settled = nil
			r.clients.settling--
		}
	}
	return out
}
