package locks

import "context"

// Audit ties records and events to the request that made them: one run of
// a command, or one call to the MCP server. It travels in the request's
// context, so that one Manager serves many requests unchanged.
type Audit struct {
	// RequestID names the request; TraceID is the W3C trace id of the
	// caller's TRACEPARENT, when it gave one.
	RequestID, TraceID string
}

type auditKey struct{}

// WithAudit returns ctx carrying a.
func WithAudit(ctx context.Context, a Audit) context.Context {
	return context.WithValue(ctx, auditKey{}, a)
}

// AuditOf is the Audit ctx carries; the zero Audit when none.
func AuditOf(ctx context.Context) Audit {
	a, _ := ctx.Value(auditKey{}).(Audit)
	return a
}
