package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
)

// caller is a tool's input: it names who the call acts as.
type caller interface{ who() service.Identity }

// identityArgs name who a call acts as, when the config allows it.
type identityArgs struct {
	Worker     string `json:"worker,omitempty" jsonschema:"worker id for this call; only with mcp.identity_from_arguments, else it must match the server's"`
	WorkerType string `json:"worker_type,omitempty" jsonschema:"human or agent; same condition as worker"`
	Session    string `json:"session,omitempty" jsonschema:"session id; same condition as worker"`
}

// toolErrorOf classifies err as the CLI's exit code does, with the hint
// an agent acts on.
func toolErrorOf(err error) *outcome.ErrorObject {
	if err == nil {
		return nil
	}
	o := outcome.Of(err, outcome.Context{})
	return o.Object(err, o.AgentHint)
}

// refusable is a tool's output, which carries why a call was refused.
type refusable interface{ refuse(*outcome.ErrorObject) }

// addTool registers a tool whose input and output schemas are derived from
// In and Out, as mcp.AddTool derives them. The handler decodes the
// arguments straight into In (unknown fields, wrong types and missing
// required fields are refused) and encodes Out once: the SDK's generic path
// would also decode the arguments into a map, validate that against the
// schema and encode, decode and validate the output again, which is most
// of the server's work for a call. run fills in its output and returns why
// it could not do what was asked; a refusal is a tool result with isError
// set and the structured output (error included), never a protocol error.
// newOut gives the output its empty lists, so they print as [] not null.
func addTool[In caller, Out any, PO interface {
	*Out
	refusable
}](srv *mcp.Server, base *service.Workspace, trace string, t *mcp.Tool, newOut func() Out, run func(context.Context, *service.Workspace, In, PO) error) {
	inSchema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", t.Name, err)) // a programming error, caught by every test
	}
	outSchema, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("output schema of %s: %v", t.Name, err))
	}
	t.InputSchema, t.OutputSchema = inSchema, outSchema
	srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// Each call is a request of its own, traced as the server is.
		ctx = service.WithRequest(ctx, trace)
		out := newOut()
		in, err := decodeArguments[In](req.Params.Arguments, inSchema)
		var e *service.Workspace
		if err == nil {
			e, err = base.ActAs(in.who())
		}
		if err == nil {
			err = run(ctx, e, in, &out)
		}
		if err != nil {
			PO(&out).refuse(toolErrorOf(err))
		}
		data, merr := json.Marshal(out)
		if merr != nil {
			return nil, fmt.Errorf("encode the result of %s: %w", t.Name, merr)
		}
		// The JSON also as text, for clients that read only the content,
		// as the MCP specification asks.
		return &mcp.CallToolResult{
			IsError:           err != nil,
			StructuredContent: json.RawMessage(data),
			Content:           []mcp.Content{&mcp.TextContent{Text: string(data)}},
		}, nil
	})
}

// decodeArguments decodes a call's arguments, a JSON object, into In,
// whose schema is schema. Field names match exactly (encoding/json alone
// would take "Keys" for "keys").
func decodeArguments[In any](raw json.RawMessage, schema *jsonschema.Schema) (In, error) {
	var in In
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	var given map[string]json.RawMessage
	if err := json.Unmarshal(raw, &given); err != nil {
		return in, argumentError(err, schema)
	}
	for _, f := range slices.Sorted(maps.Keys(given)) {
		if schema.Properties[f] == nil {
			return in, service.Usagef("arguments: unknown field %q", f)
		}
	}
	for _, f := range schema.Required {
		if _, ok := given[f]; !ok {
			return in, service.Usagef("arguments: %s is required", f)
		}
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, argumentError(err, schema)
	}
	return in, nil
}

// argumentError says what is wrong with the arguments in their own terms,
// not in Go's.
func argumentError(err error, schema *jsonschema.Schema) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return service.Usagef("arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if te.Field == "" {
		return service.Usagef("arguments must be a JSON object, got %s", te.Value)
	}
	want := jsonTypeName(te.Type)
	if p := schema.Properties[te.Field]; p != nil && (p.Type == "array" || slices.Contains(p.Types, "array")) && want != "an array" {
		// encoding/json names the item's type, not the field's
		want = "an array of " + strings.TrimPrefix(strings.TrimPrefix(want, "an "), "a ") + "s"
	}
	return service.Usagef("arguments: %s must be %s, got %s", te.Field, want, te.Value)
}

// jsonTypeName names a Go type as JSON Schema does.
func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// Bounds of the duration arguments: beyond them a float would not even fit
// a time.Duration.
const (
	maxTTLMinutes  = 366 * 24 * 60
	maxWaitSeconds = 24 * 60 * 60
)

// durations converts ttl_minutes and wait_seconds (0: the default).
func durations(ttlMinutes, waitSeconds float64) (ttl, wait time.Duration, err error) {
	if !(ttlMinutes >= 0 && ttlMinutes <= maxTTLMinutes) {
		return 0, 0, service.Usagef("ttl_minutes must be from 0 to %d, got %v", maxTTLMinutes, ttlMinutes)
	}
	if !(waitSeconds >= 0 && waitSeconds <= maxWaitSeconds) {
		return 0, 0, service.Usagef("wait_seconds must be from 0 to %d, got %v", maxWaitSeconds, waitSeconds)
	}
	return time.Duration(ttlMinutes * float64(time.Minute)), time.Duration(waitSeconds * float64(time.Second)), nil
}

type acquireIn struct {
	FilePath    string   `json:"file_path,omitempty" jsonschema:"the key to lock: a repo-relative path, a doublestar pattern, or a logical key such as 'api:GET /v1/users' or 'feature:FEAT-1:pause'"`
	Keys        []string `json:"keys,omitempty" jsonschema:"several keys, taken all or nothing (with or instead of file_path)"`
	Reason      string   `json:"reason,omitempty" jsonschema:"why the lock is taken, shown to other workers"`
	TTLMinutes  float64  `json:"ttl_minutes,omitempty" jsonschema:"lifetime in minutes (default by worker type)"`
	TaskID      string   `json:"task_id,omitempty" jsonschema:"task the lock serves"`
	WaitSeconds float64  `json:"wait_seconds,omitempty" jsonschema:"wait up to this long for held keys to become free"`
	Branch      string   `json:"branch,omitempty" jsonschema:"hold the locks on this branch only (locks.per_branch); without it a lock holds on every branch"`
	identityArgs
}

type acquireOut struct {
	Acquired bool                 `json:"acquired"`
	Locks    []service.LockView   `json:"locks"`
	Error    *outcome.ErrorObject `json:"error,omitempty"`
}

func (o *acquireOut) refuse(te *outcome.ErrorObject) { o.Error = te }

func acquireLock(ctx context.Context, e *service.Workspace, in acquireIn, out *acquireOut) error {
	ttl, wait, err := durations(in.TTLMinutes, in.WaitSeconds)
	if err != nil {
		return err
	}
	res, err := e.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: keyArgs(in.FilePath, in.Keys), Tool: true,
		TTL: ttl, Wait: wait, Reason: in.Reason, Task: in.TaskID, Branch: in.Branch})
	for _, r := range res.Locks {
		out.Locks = append(out.Locks, service.ViewOf(r.Lock))
	}
	out.Acquired = err == nil
	return err
}

// keyArgs are the keys a call names: file_path first, then keys.
func keyArgs(filePath string, keys []string) []string {
	if filePath == "" {
		return keys
	}
	return append([]string{filePath}, keys...)
}

type releaseIn struct {
	FilePath string   `json:"file_path,omitempty" jsonschema:"the key to release"`
	Keys     []string `json:"keys,omitempty" jsonschema:"several keys to release"`
	Force    bool     `json:"force,omitempty" jsonschema:"release even when another worker holds it (logged)"`
	Branch   string   `json:"branch,omitempty" jsonschema:"release the locks held on this branch (locks.per_branch)"`
	identityArgs
}

type releaseOut struct {
	Released []string             `json:"released"`
	Forced   []service.LockView   `json:"forced,omitempty" jsonschema:"locks of others removed with force"`
	Missing  []string             `json:"missing,omitempty" jsonschema:"keys that were not locked"`
	Error    *outcome.ErrorObject `json:"error,omitempty"`
}

func (o *releaseOut) refuse(te *outcome.ErrorObject) { o.Error = te }

func releaseLock(ctx context.Context, e *service.Workspace, in releaseIn, out *releaseOut) error {
	res, err := e.Locks().Release(ctx, lockops.ReleaseRequest{Keys: keyArgs(in.FilePath, in.Keys), Tool: true, Force: in.Force, Branch: in.Branch})
	out.fill(res)
	return err
}

func (out *releaseOut) fill(res locks.ReleaseResult) {
	for _, l := range res.Removed {
		out.Released = append(out.Released, l.Key)
	}
	// Removed includes the forced ones.
	for _, l := range res.Forced {
		out.Forced = append(out.Forced, service.ViewOf(l))
	}
	out.Missing = res.Missing
}

type refreshIn struct {
	FilePath   string   `json:"file_path,omitempty" jsonschema:"the key to refresh"`
	Keys       []string `json:"keys,omitempty" jsonschema:"several keys to refresh"`
	TTLMinutes float64  `json:"ttl_minutes,omitempty" jsonschema:"new lifetime from now, in minutes (default by worker type)"`
	identityArgs
}

type locksOut struct {
	Locks []service.LockView   `json:"locks"`
	Error *outcome.ErrorObject `json:"error,omitempty"`
}

func (o *locksOut) refuse(te *outcome.ErrorObject) { o.Error = te }

func refreshLock(ctx context.Context, e *service.Workspace, in refreshIn, out *locksOut) error {
	ttlArg, _, err := durations(in.TTLMinutes, 0)
	if err != nil {
		return err
	}
	ls, err := e.Locks().Refresh(ctx, lockops.RefreshRequest{Keys: keyArgs(in.FilePath, in.Keys), Tool: true, TTL: ttlArg})
	out.Locks = append(out.Locks, session.ViewsOf(ls)...)
	return err
}

type checkLocksIn struct {
	FilePath string   `json:"file_path,omitempty" jsonschema:"a key or path to check"`
	Keys     []string `json:"keys,omitempty" jsonschema:"keys or paths to check; with neither, every live lock is returned"`
	identityArgs
}

type checkLocksOut struct {
	// Free: no key is held by another worker.
	Free     bool                 `json:"free" jsonschema:"true when no key asked about is held by another worker"`
	Statuses []lockops.KeyStatus  `json:"statuses,omitempty"`
	Locks    []service.LockView   `json:"locks,omitempty" jsonschema:"every live lock, when no key was given"`
	Error    *outcome.ErrorObject `json:"error,omitempty"`
}

func (o *checkLocksOut) refuse(te *outcome.ErrorObject) { o.Error, o.Free = te, false }

func checkLocks(ctx context.Context, e *service.Workspace, in checkLocksIn, out *checkLocksOut) error {
	if in.FilePath == "" && len(in.Keys) == 0 {
		res, err := e.Locks().List(ctx, lockops.ListRequest{})
		out.Locks = res.Live()
		return err
	}
	res, err := e.Locks().Check(ctx, lockops.CheckRequest{Keys: keyArgs(in.FilePath, in.Keys), Tool: true})
	out.Statuses, out.Free = res.Statuses, out.Free && !res.Held
	return err
}

type listIn struct {
	Mine  bool `json:"mine,omitempty" jsonschema:"only the caller's locks"`
	Stale bool `json:"stale,omitempty" jsonschema:"only locks older than locks.stale_minutes"`
	identityArgs
}

func listLocks(ctx context.Context, e *service.Workspace, in listIn, out *locksOut) error {
	res, err := e.Locks().List(ctx, lockops.ListRequest{Mine: in.Mine, Stale: in.Stale})
	out.Locks = append(out.Locks, res.Live()...)
	return err
}

type claimIn struct {
	PackageID   string  `json:"package_id,omitempty" jsonschema:"work package to claim; without it, the first free one"`
	TTLMinutes  float64 `json:"ttl_minutes,omitempty" jsonschema:"lifetime (default the package's ttl, else by worker type)"`
	WaitSeconds float64 `json:"wait_seconds,omitempty" jsonschema:"with package_id: wait up to this long for its locks"`
	identityArgs
}

type claimOut struct {
	Claimed bool `json:"claimed"`
	// Drained: nothing was claimed because every package is done or
	// failed; a worker loop stops on it.
	Drained bool                 `json:"drained,omitempty" jsonschema:"every package is done or failed: nothing is left to claim"`
	Package string               `json:"package,omitempty"`
	Title   string               `json:"title,omitempty"`
	Locks   []service.LockView   `json:"locks"`
	Error   *outcome.ErrorObject `json:"error,omitempty"`
}

func (o *claimOut) refuse(te *outcome.ErrorObject) { o.Error = te }

func claimPackage(ctx context.Context, e *service.Workspace, in claimIn, out *claimOut) error {
	ttl, wait, err := durations(in.TTLMinutes, in.WaitSeconds)
	if err != nil {
		return err
	}
	c, err := e.Queue().ClaimWork(ctx, queue.ClaimRequest{PackageRequest: queue.PackageRequest{ID: in.PackageID}, TTL: ttl, Wait: wait})
	out.Package, out.Title, out.Drained = c.ID, c.Title, c.Drained
	for _, r := range c.Locks {
		out.Locks = append(out.Locks, service.ViewOf(r.Lock))
	}
	out.Claimed = err == nil
	return err
}

type completeIn struct {
	PackageID string `json:"package_id" jsonschema:"the claimed work package to finish"`
	Commit    string `json:"commit,omitempty" jsonschema:"the commit that finished it (default HEAD)"`
	Failed    string `json:"failed,omitempty" jsonschema:"mark it failed for this reason instead of done; claims skip it until it is retried"`
	identityArgs
}

func completePackage(ctx context.Context, e *service.Workspace, in completeIn, out *releaseOut) error {
	if in.PackageID == "" {
		return service.Usagef("give package_id")
	}
	res, err := e.Queue().FinishPackage(ctx, queue.FinishRequest{PackageRequest: queue.PackageRequest{ID: in.PackageID},
		Finish: queue.Finish{Commit: in.Commit, Failed: in.Failed}})
	out.fill(res.ReleaseResult)
	return err
}

type listPackagesIn struct {
	identityArgs
}

type packagesOut struct {
	Packages []queue.PackageStatus `json:"packages"`
	Counts   map[string]int        `json:"counts" jsonschema:"packages per state: ready, claimed, done, failed"`
	Drained  bool                  `json:"drained" jsonschema:"every package is done or failed"`
	Error    *outcome.ErrorObject  `json:"error,omitempty"`
}

func (o *packagesOut) refuse(te *outcome.ErrorObject) { o.Error = te }

func listPackages(ctx context.Context, e *service.Workspace, _ listPackagesIn, out *packagesOut) error {
	l, err := e.Queue().ListPackages(ctx, "")
	if err != nil {
		return err
	}
	out.Packages = append(out.Packages, l.Packages...)
	for s, n := range l.Counts {
		out.Counts[string(s)] = n
	}
	out.Drained = l.Drained()
	return nil
}

type pauseIn struct {
	Feature string `json:"feature" jsonschema:"feature id (FEAT-1) or its pause key (feature:FEAT-1:pause)"`
	identityArgs
}

type pauseOut struct {
	Feature string               `json:"feature"`
	Key     string               `json:"key,omitempty"`
	Paused  bool                 `json:"paused" jsonschema:"someone holds the pause lock"`
	Mine    bool                 `json:"mine" jsonschema:"the caller holds it"`
	Lock    *service.LockView    `json:"lock,omitempty"`
	Error   *outcome.ErrorObject `json:"error,omitempty"`
}

func (o *pauseOut) refuse(te *outcome.ErrorObject) { o.Error = te }

func pauseStatus(ctx context.Context, e *service.Workspace, in pauseIn, out *pauseOut) error {
	out.Feature = in.Feature
	if in.Feature == "" {
		return service.Usagef("give feature")
	}
	st, err := e.Locks().PauseStatus(ctx, lockops.PauseStatusRequest{Feature: in.Feature})
	out.Key, out.Paused, out.Mine, out.Lock = st.Key, st.Paused, st.Mine, st.Lock
	return err
}

func (i identityArgs) who() service.Identity { return service.Identity(i) }

type portsIn struct {
	SessionID  string  `json:"session_id,omitempty" jsonschema:"session the ports are leased to (default the server's session)"`
	Count      int     `json:"count,omitempty" jsonschema:"how many ports (default 1)"`
	TTLMinutes float64 `json:"ttl_minutes,omitempty" jsonschema:"lease lifetime (default as a lock, by worker type)"`
}

func (in portsIn) who() service.Identity { return service.Identity{Session: in.SessionID} }

type portLease struct {
	Port      int       `json:"port"`
	Session   string    `json:"session"`
	ExpiresAt time.Time `json:"expires_at"`
}

type portsOut struct {
	Ports []portLease          `json:"ports"`
	Error *outcome.ErrorObject `json:"error,omitempty"`
}

func (o *portsOut) refuse(te *outcome.ErrorObject) { o.Error = te }

func leases(ls []locks.Lock) []portLease {
	out := []portLease{}
	for _, r := range lockops.PortRows(ls) {
		out = append(out, portLease{Port: r.Port, Session: r.Session, ExpiresAt: r.ExpiresAt})
	}
	return out
}

func allocatePorts(ctx context.Context, e *service.Workspace, in portsIn, out *portsOut) error {
	if in.Count == 0 {
		in.Count = 1
	}
	if in.Count < 1 || in.Count > 1000 {
		return service.Usagef("count must be from 1 to 1000, got %d", in.Count)
	}
	ttl, _, err := durations(in.TTLMinutes, 0)
	if err != nil {
		return err
	}
	ls, err := e.Locks().AllocatePorts(ctx, lockops.PortsRequest{Count: in.Count, TTL: ttl})
	out.Ports = leases(ls)
	return err
}

type releasePortsIn struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"session whose leases to give back (default the server's session)"`
	Ports     []int  `json:"ports,omitempty" jsonschema:"ports to give back; without them, every lease of the session"`
}

func (in releasePortsIn) who() service.Identity { return service.Identity{Session: in.SessionID} }

func releasePorts(ctx context.Context, e *service.Workspace, in releasePortsIn, out *releaseOut) error {
	args := make([]string, len(in.Ports))
	for i, p := range in.Ports {
		args[i] = strconv.Itoa(p)
	}
	res, err := e.Locks().ReleasePorts(ctx, lockops.PortsReleaseRequest{Ports: args})
	out.fill(res)
	return err
}

type checkChangeIn struct {
	Paths   []string `json:"paths" jsonschema:"files the change touches: repo-relative, or absolute inside the worktree"`
	Profile string   `json:"profile,omitempty" jsonschema:"scope profile to check against, e.g. backfill"`
	identityArgs
}

type checkChangeOut struct {
	OK         bool                 `json:"ok" jsonschema:"the pre-commit hook would accept a commit of these paths"`
	Violations []service.Violation  `json:"violations"`
	Warnings   []string             `json:"warnings,omitempty"`
	Error      *outcome.ErrorObject `json:"error,omitempty"`
}

func (o *checkChangeOut) refuse(te *outcome.ErrorObject) { o.Error = te }

func checkChange(ctx context.Context, e *service.Workspace, in checkChangeIn, out *checkChangeOut) error {
	if len(in.Paths) == 0 {
		return service.Usagef("give paths")
	}
	res, err := e.CheckPaths(ctx, service.PathCheck{Paths: in.Paths, Profile: in.Profile, Commit: true})
	if err != nil {
		return err
	}
	out.OK, out.Violations, out.Warnings = res.Report.OK, res.Report.Violations, res.Report.Warnings
	return nil
}

// newServer registers every tool on a server working on base.
func newServer(ctx context.Context, base *service.Workspace, version string) *mcp.Server {
	trace := locks.AuditOf(ctx).TraceID
	srv := mcp.NewServer(&mcp.Implementation{Name: "lockgate", Version: version}, &mcp.ServerOptions{
		Instructions: "Locks shared by every worker of this repository. Take a lock (acquire_lock) before editing a file or " +
			"using a shared resource, release it (release_lock) when done, and check_change before committing. " +
			"A refused call returns isError with error.class (busy, invalid_key, operation_not_permitted, …) and who holds what until when.",
	})
	addTool(srv, base, trace, &mcp.Tool{Name: "acquire_lock", Description: "Lock a file, pattern or logical key (all or nothing). " +
		"Refused when another worker holds it: the result names holder, expiry and reason."}, func() acquireOut { return acquireOut{Locks: []service.LockView{}} }, acquireLock)
	addTool(srv, base, trace, &mcp.Tool{Name: "release_lock", Description: "Release locks the caller holds (another's only with force, logged)."}, func() releaseOut { return releaseOut{Released: []string{}} }, releaseLock)
	addTool(srv, base, trace, &mcp.Tool{Name: "refresh_lock", Description: "Extend locks the caller holds."}, func() locksOut { return locksOut{Locks: []service.LockView{}} }, refreshLock)
	addTool(srv, base, trace, &mcp.Tool{Name: "check_locks", Description: "Whether keys or paths are free, held by the caller, or held by another; " +
		"without keys, every live lock."}, func() checkLocksOut { return checkLocksOut{Free: true} }, checkLocks)
	addTool(srv, base, trace, &mcp.Tool{Name: "list_locks", Description: "Every live lock (or only the caller's, or only stale ones)."}, func() locksOut { return locksOut{Locks: []service.LockView{}} }, listLocks)
	addTool(srv, base, trace, &mcp.Tool{Name: "claim_package", Description: "Claim a work package: its task lock and all its locks, " +
		"all or nothing; without package_id the highest-priority ready package whose dependencies are done and locks free " +
		"(drained when every package is done or failed)."}, func() claimOut { return claimOut{Locks: []service.LockView{}} }, claimPackage)
	addTool(srv, base, trace, &mcp.Tool{Name: "complete_package", Description: "Finish a claimed work package: mark it done (or failed) and release its locks; " +
		"a done package is never handed out again."}, func() releaseOut { return releaseOut{Released: []string{}} }, completePackage)
	addTool(srv, base, trace, &mcp.Tool{Name: "list_packages", Description: "Every work package with its state (ready, claimed, done, failed), " +
		"its holder and expiry, and what it waits for (dependencies, locks of others)."}, func() packagesOut {
		return packagesOut{Packages: []queue.PackageStatus{}, Counts: map[string]int{}}
	}, listPackages)
	addTool(srv, base, trace, &mcp.Tool{Name: "pause_status", Description: "Whether a feature is paused (its feature:<id>:pause lock is held); " +
		"stop and wait while another worker holds it."}, func() pauseOut { return pauseOut{} }, pauseStatus)
	addTool(srv, base, trace, &mcp.Tool{Name: "allocate_ports", Description: "Lease free TCP ports on this machine to a session; " +
		"never handed to two sessions. Use this, not env: keys, for ports."}, func() portsOut { return portsOut{Ports: []portLease{}} }, allocatePorts)
	addTool(srv, base, trace, &mcp.Tool{Name: "release_ports", Description: "Give back port leases."}, func() releaseOut { return releaseOut{Released: []string{}} }, releasePorts)
	addTool(srv, base, trace, &mcp.Tool{Name: "check_change", Description: "Would a commit touching these paths pass the pre-commit hook? " +
		"Scope (user-owned, core, profile, key rules) and locks of others, with the reason and fix for each refusal."}, func() checkChangeOut { return checkChangeOut{Violations: []service.Violation{}} }, checkChange)
	return srv
}
