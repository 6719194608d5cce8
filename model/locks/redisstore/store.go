package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

var _ locks.Store = (*Store)(nil)

// maxBatches is the number of script batches a Store keeps in flight. Up
// to that many concurrent callers each send at once, as with a connection
// each; beyond it they queue and share round trips. Measured on loopback
// with 8 and 64 callers, 8 did best at both: fewer make the few callers
// wait for each other, more leave the many unbatched.
const maxBatches = 8

// MaxFence is the highest fence the store hands out. The scripts read the
// counter HINCRBY returns as a Lua number, a double, which holds every
// integer only up to 2^53: past it two fences could round to one.
const MaxFence = 1<<53 - 1

// Defaults of Options.
const (
	DefaultPrefix          = "lockgate:"
	DefaultTimeout         = 2 * time.Second
	DefaultRateLimitWindow = time.Minute
	DefaultExpiredGrace    = 24 * time.Hour
)

// Options configure a Store. The zero value is usable: one repository per
// Redis database, no rate limit, history kept until released.
type Options struct {
	// Prefix starts every Redis key of the store, so that one Redis serves
	// many repositories: give each its own (RepoPrefix derives one from the
	// repository's identity). Default "lockgate:".
	Prefix string
	// RateLimitPerMin, when > 0, is the number of acquisitions a session
	// may make per RateLimitWindow; the next one fails with a
	// *locks.RateLimitedError. The count is kept in Redis, so every
	// process of the session shares it. Refusals (a held key) do not count.
	RateLimitPerMin int
	// RateLimitWindow is the sliding window of the rate limit (default 1m).
	RateLimitWindow time.Duration
	// HistoryTTL, when > 0, expires a session's history that long after its
	// last acquisition or refresh; 0 keeps it until its locks are released.
	HistoryTTL time.Duration
	// ExpiredGrace is how long Redis keeps a record after its expires_at,
	// so that taking it over reports it as prev (a lock_takeover event)
	// and `lock list` shows it as expired. After that Redis drops it and
	// an acquisition reports no prev. Default 24h; < 0 drops records at
	// their expiry.
	ExpiredGrace time.Duration
	// DialTimeout bounds connecting (default: the URL's dial_timeout, else
	// 2s).
	DialTimeout time.Duration
	// OpTimeout bounds each operation (default: the URL's read_timeout,
	// else 2s), so that a dead or hung server is reported as unavailable
	// within it. A read of several round trips is bounded as a whole,
	// connecting included; a lock mutation, one round trip, by the
	// client's timeouts, each OpTimeout, on waiting for a free connection,
	// sending and reading the answer (and DialTimeout on connecting).
	// Open takes at most the longer of DialTimeout and OpTimeout.
	OpTimeout time.Duration
	// OneTimeout makes the Store give up on a server that did not answer
	// in time: every later operation fails at once, with the same
	// reason. A one-shot command sets it, so that a hung server costs it
	// one timeout, not one per operation.
	OneTimeout bool
	// PoolSize is the number of connections kept (default: go-redis's, ten
	// per CPU). A CLI process needs one.
	PoolSize int
	// FenceFloor, when set, returns the highest fence the lock log names.
	// A server that lost the store's fence counters (no persistence,
	// FLUSHALL, a failover to an empty replica) starts them over; every
	// fence it hands out from then on is above the floor, so no fence a
	// grant of the lost state used is handed out again. It is asked only
	// when an acquisition finds no floor (that, or a new server). An error
	// fails the acquisition (unavailable). Without it the floor is 0.
	FenceFloor func(ctx context.Context) (uint64, error)
	// MinReplicas, when > 0, is the number of replicas that must have a
	// grant (an acquisition) before it is reported: after the
	// script the store sends WAIT and, when fewer replicas confirm within
	// OpTimeout, undoes the grant and fails with a *locks.UnavailableError
	// (reason ReasonReplicas). A grant a replica has survives the loss of
	// the primary when Sentinel or the cluster promotes that replica.
	MinReplicas int
	// legacyExact keeps path and pattern records under their exact
	// spelling, as versions before keys were folded did; tests use it to
	// write such stores.
	legacyExact bool
	// legacyASCII keeps them under their identity as versions that folded
	// A-Z only computed it (lockkey.FoldCaseASCII); tests use it too.
	legacyASCII bool
}

// Store is the Redis lock store. Its methods are safe for concurrent use;
// any number of processes on any number of machines may share one server.
type Store struct {
	rdb     redis.UniversalClient
	topo    topology
	batch   *batcher
	display string // the URL without its password, for messages

	// minReplicas is the number of replicas that must confirm a grant
	// (Options.MinReplicas).
	minReplicas int
	// failover is the options of a Sentinel URL's client, for asking its
	// Sentinels directly (unknownMaster); sentinelAddrs and master name
	// them in messages.
	failover      *redis.FailoverOptions
	sentinelAddrs []string
	master        string

	p       string // key prefix
	kFences string
	kKeys   string
	kPat    string
	kHist   string // prefix of the session histories
	// kCleared is the clear log: a stream of every record Remove
	// deleted, written by the script that deleted it.
	kCleared string

	graceMS     int64
	historyTTL  int64 // ms
	rateLimit   int
	rateWindow  time.Duration
	rateWinMS   int64
	opTimeout   time.Duration
	dialTimeout time.Duration
	// fold: path and pattern keys are one key per lockkey.FoldCase.
	fold bool
	// ascii: identities are lockkey.FoldCaseASCII (Options.legacyASCII).
	ascii bool
	// leftovers maps an identity to the member of a record an earlier
	// version kept under a spelling of it that migrate could not move.
	leftovers map[string]string

	oneTimeout bool
	gaveUp     atomic.Bool // with oneTimeout: the server did not answer in time

	fenceFloor func(context.Context) (uint64, error)
	floorMu    sync.Mutex    // one caller at a time reads the lock log
	floorSets  atomic.Uint64 // floors this Store set, to skip a read another caller just made
}

// Open connects to the Redis deployment of rawURL and loads the store's
// scripts, which checks that the server answers and accepts the
// credentials. rawURL names one server (redis://[user:password@]host:port/db,
// rediss:// for TLS, unix:///path?db=N), a primary found through Sentinel
// (redis+sentinel://…) or a Redis Cluster (redis+cluster://…; see
// multiURL). A malformed URL or option is a plain error; a server that
// cannot be used is a *locks.UnavailableError.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	if opts.RateLimitPerMin < 0 {
		return nil, fmt.Errorf("redis store: negative rate limit %d", opts.RateLimitPerMin)
	}
	if opts.RateLimitWindow < 0 || opts.HistoryTTL < 0 || opts.DialTimeout < 0 || opts.OpTimeout < 0 || opts.PoolSize < 0 {
		return nil, errors.New("redis store: negative duration or pool size in options")
	}
	if opts.MinReplicas < 0 {
		return nil, fmt.Errorf("redis store: negative min_replicas %d", opts.MinReplicas)
	}
	s := &Store{display: redactURL(rawURL), topo: topologyOf(rawURL)}
	if err := s.setPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	s.rateLimit = opts.RateLimitPerMin
	s.rateWindow = orDefault(opts.RateLimitWindow, DefaultRateLimitWindow)
	s.rateWinMS = max(s.rateWindow.Milliseconds(), 1)
	s.historyTTL = opts.HistoryTTL.Milliseconds()
	s.fold = !opts.legacyExact
	s.ascii = opts.legacyASCII
	s.fenceFloor = opts.FenceFloor
	s.minReplicas = opts.MinReplicas
	switch {
	case opts.ExpiredGrace < 0:
		s.graceMS = 0
	case opts.ExpiredGrace == 0:
		s.graceMS = DefaultExpiredGrace.Milliseconds()
	default:
		s.graceMS = opts.ExpiredGrace.Milliseconds()
	}
	rdb, poolSize, err := s.newClient(rawURL, opts)
	if err != nil {
		return nil, fmt.Errorf("redis store: invalid URL %s: %w", s.display, err)
	}
	s.rdb = rdb
	quiet.Do(func() { redis.SetLogger(nopLogger{}) })
	s.oneTimeout = opts.OneTimeout
	if s.oneTimeout {
		s.rdb.AddHook(giveUpHook{s})
	}
	// No more batches in flight than connections, so that lock mutations
	// queue here, where their deadlines are kept, not for a connection.
	s.batch = &batcher{rdb: s.rdb, max: min(maxBatches, poolSize), timeout: s.opTimeout}

	// One round trip loads every script: later calls are one EVALSHA each.
	// A server that accepts the connection and then says nothing is not
	// given the dial's time on top.
	octx, cancel := context.WithTimeout(ctx, max(s.dialTimeout, s.opTimeout))
	defer cancel()
	var folded *redis.IntCmd
	home, err := s.home(octx)
	if err == nil {
		_, err = home.Pipelined(octx, func(p redis.Pipeliner) error {
			// p.ScriptLoad, not Script.Load: in a pipeline the latter would
			// take the not yet received reply for the script's hash.
			for _, sc := range allScripts {
				p.ScriptLoad(octx, sc.src)
			}
			folded = p.Exists(octx, s.unicodeKey())
			return nil
		})
	}
	if err == nil && s.fold && !s.ascii && folded.Val() == 0 {
		err = s.migrate(octx)
	}
	if err != nil {
		uerr := s.unknownMaster(octx, err)
		if uerr == nil {
			uerr = s.fail(ctx, "open", err)
		}
		_ = s.rdb.Close()
		return nil, uerr
	}
	return s, nil
}

// newClient makes the client of rawURL's deployment, with the store's
// timeouts, and returns it with its pool size (per node on a cluster).
func (s *Store) newClient(rawURL string, opts Options) (redis.UniversalClient, int, error) {
	var ro *redis.Options
	var fo *redis.FailoverOptions
	var co *redis.ClusterOptions
	var c clientOpts
	if s.topo == single {
		var err error
		if ro, err = redis.ParseURL(rawURL); err != nil {
			return nil, 0, err
		}
		c = clientOpts{&ro.DialTimeout, &ro.ReadTimeout, &ro.WriteTimeout, &ro.PoolTimeout,
			&ro.MaxRetries, &ro.DialerRetries, &ro.Protocol, &ro.PoolSize, &ro.ContextTimeoutEnabled, &ro.DisableIdentity}
		ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	} else {
		m, err := parseMultiURL(rawURL)
		if err != nil {
			return nil, 0, err
		}
		q := maps(m.query)
		// parseMultiURL refused these options on a cluster URL.
		su, sp := q.Get("sentinel_username"), q.Get("sentinel_password")
		q.Del("sentinel_username")
		q.Del("sentinel_password")
		m.query = q
		if s.topo == sentinel {
			if fo, err = redis.ParseFailoverURL(m.base()); err != nil {
				return nil, 0, err
			}
			fo.MasterName, fo.DB, fo.SentinelAddrs = m.master, m.db, m.addrs
			s.failover, s.sentinelAddrs, s.master = fo, slices.Clone(m.addrs), m.master
			fo.Username, fo.Password = m.user, m.pass
			fo.SentinelUsername, fo.SentinelPassword = su, sp
			// Each connection first makes sure the primary it reaches
			// hands out no fence a lost write handed out before.
			fo.OnConnect = s.checkPrimary
			c = clientOpts{&fo.DialTimeout, &fo.ReadTimeout, &fo.WriteTimeout, &fo.PoolTimeout,
				&fo.MaxRetries, &fo.DialerRetries, &fo.Protocol, &fo.PoolSize, &fo.ContextTimeoutEnabled, &fo.DisableIdentity}
		} else {
			if co, err = redis.ParseClusterURL(m.base()); err != nil {
				return nil, 0, err
			}
			co.Addrs = m.addrs
			co.Username, co.Password = m.user, m.pass
			co.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
			c = clientOpts{&co.DialTimeout, &co.ReadTimeout, &co.WriteTimeout, &co.PoolTimeout,
				&co.MaxRetries, &co.DialerRetries, &co.Protocol, &co.PoolSize, &co.ContextTimeoutEnabled, &co.DisableIdentity}
		}
	}
	s.dialTimeout = first(opts.DialTimeout, *c.dial, DefaultTimeout)
	s.opTimeout = first(opts.OpTimeout, *c.read, DefaultTimeout)
	*c.dial = s.dialTimeout
	*c.read, *c.write, *c.pool = s.opTimeout, s.opTimeout, s.opTimeout
	// A dead or hung server must be reported within the timeouts, not after
	// go-redis's retries and dial back-off; the Manager's --wait loop is
	// the retry. No retry also means a script never runs twice. (A
	// cluster's MOVED and ASK redirects are not retries: the node that
	// answers them ran nothing.)
	*c.maxRetries = -1
	*c.dialerRetries = 1
	*c.ctxTimeout = true
	// Fewer commands per new connection: a CLI process makes only one.
	*c.noIdentity = true
	if *c.protocol == 0 {
		*c.protocol = 2
	}
	if opts.PoolSize > 0 {
		*c.poolSize = opts.PoolSize
	}
	switch {
	case fo != nil:
		cl := redis.NewFailoverClient(fo)
		return cl, cl.Options().PoolSize, nil
	case co != nil:
		cl := redis.NewClusterClient(co)
		return cl, cl.Options().PoolSize, nil
	}
	cl := redis.NewClient(ro)
	return cl, cl.Options().PoolSize, nil
}

// clientOpts points at the fields the store sets in go-redis's options of
// each kind of client.
type clientOpts struct {
	dial, read, write, pool                       *time.Duration
	maxRetries, dialerRetries, protocol, poolSize *int
	ctxTimeout, noIdentity                        *bool
}

// home returns the client of the server that keeps the store's keys: on
// a cluster the primary of their one slot (see setPrefix), else the
// store's client. Scripts loaded there, and WAIT sent there, reach the
// server that runs the store's scripts.
func (s *Store) home(ctx context.Context) (*redis.Client, error) {
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		return cc.MasterForKey(ctx, s.kFences)
	}
	// A single server's client and Sentinel's failover client are both
	// a *redis.Client (newClient).
	return s.rdb.(*redis.Client), nil
}

func orDefault(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// first returns the first positive duration.
func first(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}

// redactURL drops the password from a URL for messages.
func redactURL(raw string) string {
	if topologyOf(raw) != single {
		m, err := parseMultiURL(raw)
		if err != nil {
			return redactUnparsed(raw)
		}
		return m.redacted()
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "redis"
	}
	return u.Redacted()
}

// passwordOption is a URL option that holds a password.
var passwordOption = regexp.MustCompile(`(?i)((?:^|[?&])(?:sentinel_)?password=)[^&#]*`)

// redactUnparsed is a URL that did not parse, as it was written (so that
// its message shows what is wrong with it) but for its passwords: the
// user information before the servers, and password options.
func redactUnparsed(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return strings.ToLower(scheme)
	}
	hosts, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		hosts, tail = rest[:i], rest[i:]
	}
	if i := strings.LastIndex(hosts, "@"); i >= 0 {
		user, _, _ := strings.Cut(hosts[:i], ":")
		hosts = user + ":xxxxx@" + hosts[i+1:]
	}
	return strings.ToLower(scheme) + "://" + hosts + passwordOption.ReplaceAllString(tail, "${1}xxxxx")
}

// setPrefix sets the key prefix. On a cluster it becomes a hash tag,
// "{P}", so that every key of the store is in one slot and each script,
// which touches several, stays atomic on one node; a prefix that holds a
// brace could end the tag early, and is refused there. Elsewhere the
// prefix is used as it is, so the keys of existing stores keep their
// names.
func (s *Store) setPrefix(p string) error {
	if p == "" {
		p = DefaultPrefix
	}
	if s.topo == cluster {
		if strings.ContainsAny(p, "{}") {
			return fmt.Errorf("redis store: key prefix %q holds a brace; on a cluster the store puts the prefix in braces itself (a hash tag)", p)
		}
		p = "{" + p + "}"
	}
	s.p = p
	s.kFences = p + "fence"
	s.kKeys = p + "i:keys"
	s.kPat = p + "i:pat"
	s.kCleared = p + "log:cleared"
	s.kHist = p + "h:"
	return nil
}

// Redis key layout under the prefix P (see the package documentation).
// Record keys start with "r:" and index keys with "i:", so no lock key can
// name another structure. A record's key, index entries, fence counter,
// history entry and channel are named by its member: the identity of its
// lock key (id), or, for a record an earlier version kept under its
// spelling, that spelling (legacy).
func (s *Store) recKey(member string) string   { return s.p + "r:" + member }
func (s *Store) histKey(session string) string { return s.kHist + session }
func (s *Store) rateKey(session string) string { return s.p + "rl:" + session }
func (s *Store) channel(member string) string  { return s.p + "c:" + member }
func (s *Store) histPrefix() string            { return s.kHist }
func (s *Store) recPrefix() string             { return s.p + "r:" }

// Prefix returns the key prefix in use.
func (s *Store) Prefix() string { return s.p }

// Where names the server and the Redis key of key's record.
func (s *Store) Where(key string) string { return s.at(s.id(key)) }

// at names the server and the Redis key of member's record.
func (s *Store) at(member string) string { return s.display + " " + s.recKey(member) }

// id is the member key's record is kept under: the folded key
// (lockkey.FoldCase), whatever core.ignorecase says, so that clones with
// and without it agree on every key.
func (s *Store) id(key string) string {
	switch {
	case s.ascii:
		return lockkey.FoldCaseASCII(key)
	case s.fold:
		return lockkey.FoldCase(key)
	}
	return key
}

// legacy returns the member of a record an earlier version kept under a
// spelling of key's identity: one migrate left (see leftovers), else the
// identity versions that folded A-Z only gave key, else key's own spelling
// when it is not its identity (a record written since by an earlier
// version on another machine: a server is shared by clones that may not
// all run this one), else "". Such records stay valid, so lookups look
// there too, in the same round trip.
func (s *Store) legacy(key string) string {
	if !s.fold || !lockkey.IsPathLike(key) {
		return ""
	}
	if old := s.leftovers[s.id(key)]; old != "" {
		return old
	}
	if old := lockkey.FoldCaseASCII(key); old != s.id(key) {
		return old
	}
	if s.id(key) != key {
		return key
	}
	return ""
}

// overlap is lockkey.OverlapFoldCase (lockkey.Overlap for legacyExact).
func (s *Store) overlap(a, b string) bool {
	if s.fold {
		return lockkey.OverlapFoldCase(a, b)
	}
	return lockkey.Overlap(a, b)
}

// Close closes the connections. Operations after Close fail as unavailable.
func (s *Store) Close() error {
	err := s.rdb.Close()
	if errors.Is(err, redis.ErrClosed) {
		return nil
	}
	return err
}

// opCtx bounds one whole operation (dial and round trips) by the store's
// timeout; the caller's earlier deadline wins.
func (s *Store) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opTimeout)
}

// quiet silences go-redis's own logging (a failed dial is printed by
// default): library code does not print, the errors say it all.
var quiet sync.Once

type nopLogger struct{}

func (nopLogger) Printf(context.Context, string, ...any) {}

func checkRecord(rec locks.Lock) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	if strings.ContainsAny(rec.Token, "\n") {
		return fmt.Errorf("lock token for %s contains a newline", rec.Key)
	}
	return nil
}

// encodeValue returns a record's Redis value without its fence, which the
// scripts put between head and tail:
//
//	<expires_at, Unix ms>\n<fence>\n<token>\n<len(session)>\n<session><record JSON>
func encodeValue(rec locks.Lock) (head, tail string, err error) {
	rec.Fence = 0 // the value's own fence field is the truth
	var arr [512]byte
	b := strconv.AppendInt(arr[:0], rec.ExpiresAt.UnixMilli(), 10)
	b = append(b, '\n')
	h := len(b)
	b = append(b, '\n')
	b = append(b, rec.Token...)
	b = append(b, '\n')
	b = strconv.AppendInt(b, int64(len(rec.Session)), 10)
	b = append(b, '\n')
	b = append(b, rec.Session...)
	if b, err = appendLockJSON(b, &rec); err != nil {
		return "", "", fmt.Errorf("encode lock %s: %w", rec.Key, err)
	}
	return string(b[:h]), string(b[h:]), nil
}

// parseValue decodes a record's Redis value and checks that it is whole and
// belongs under member: its key is member, or folds to it (a record written
// under case folding; see lockkey.FoldCase, and lockkey.FoldCaseASCII for
// versions that folded A-Z only).
func parseValue(member, v string) (locks.Lock, error) {
	f := strings.SplitN(v, "\n", 5)
	if len(f) != 5 {
		return locks.Lock{}, errors.New("malformed lock record")
	}
	exp, err1 := strconv.ParseInt(f[0], 10, 64)
	fence, err2 := strconv.ParseInt(f[1], 10, 64)
	n, err3 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || err3 != nil || fence <= 0 || n < 0 || n > len(f[4]) {
		return locks.Lock{}, errors.New("malformed lock record header")
	}
	sess, data := f[4][:n], f[4][n:]
	var rec locks.Lock
	if err := json.Unmarshal([]byte(data), &rec); err != nil {
		return locks.Lock{}, fmt.Errorf("invalid record: %w", err)
	}
	switch {
	case rec.Key != member && lockkey.FoldCase(rec.Key) != member && lockkey.FoldCaseASCII(rec.Key) != member:
		return locks.Lock{}, fmt.Errorf("record names key %q, not %q", rec.Key, member)
	case rec.Token != f[2] || rec.Session != sess || rec.ExpiresAt.UnixMilli() != exp:
		return locks.Lock{}, errors.New("record's token, session or expiry disagree with its JSON")
	}
	if err := checkRecord(rec); err != nil {
		return locks.Lock{}, err
	}
	rec.Fence = uint64(fence)
	return rec, nil
}

// lifetime is how long Redis keeps a record, in ms: until its expiry (on
// the caller's clock) plus the grace, at least 1ms, at most ~2000 years.
func (s *Store) lifetime(exp, now time.Time) int64 {
	ms := max(exp.UnixMilli()-now.UnixMilli(), 0) + s.graceMS
	return min(max(ms, 1), 1<<46)
}

// corrupt reports member's record as unreadable.
func (s *Store) corrupt(member string, err error) *locks.CorruptError {
	return &locks.CorruptError{Key: member, Path: s.at(member), Err: err}
}

// reply is a script's answer: a status word and its values.
type reply []any

func (r reply) status() string { return r.str(0) }

func (r reply) str(i int) string {
	if i >= len(r) {
		return ""
	}
	v, _ := r[i].(string)
	return v
}

func (r reply) int(i int) int64 {
	if i >= len(r) {
		return 0
	}
	switch v := r[i].(type) {
	case int64:
		return v
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

// run runs a script within the store's timeout, in a batch with the
// scripts of concurrent callers (see batcher). verb and key name the
// operation in errors.
func (s *Store) run(ctx context.Context, verb, key string, sc *script, keys []string, args ...any) (reply, error) {
	v, err := s.batch.do(ctx, sc, keys, args)
	if err != nil {
		return nil, s.fail(ctx, verb+" "+key, err)
	}
	return s.toReply(ctx, verb, key, v)
}

func (s *Store) unexpected(ctx context.Context, verb, key string, r reply) error {
	return s.fail(ctx, verb+" "+key, fmt.Errorf("unexpected script reply %q", []any(r)))
}

// Acquire stores rec under rec.Key in one round trip unless a live record
// holds the key; an expired record (expires_at < now, compared with the
// caller's clock) is replaced and returned as prev while Redis still keeps
// it (Options.ExpiredGrace). The store sets rec.Fence, and rec.Token when it
// is empty. A successful acquisition is added to rec.Session's history and
// counted against the session's rate limit.
func (s *Store) Acquire(ctx context.Context, rec locks.Lock, now time.Time) (locks.Lock, *locks.Lock, error) {
	if rec.Token == "" {
		rec.Token = locks.NewToken()
	}
	if err := checkRecord(rec); err != nil {
		return locks.Lock{}, nil, err
	}
	head, tail, err := encodeValue(rec)
	if err != nil {
		return locks.Lock{}, nil, err
	}
	k, m := rec.Key, s.id(rec.Key)
	folded := s.fold && lockkey.IsPathLike(k)
	keys := make([]string, 4, 6)
	keys[0], keys[1], keys[2], keys[3] = s.recKey(m), s.kFences, s.kKeys, s.histKey(rec.Session)
	args := make([]any, 5, 11)
	args[0], args[1], args[2], args[3], args[4] = m, now.UnixMilli(), s.lifetime(rec.ExpiresAt, now), head, tail
	if s.historyTTL > 0 || s.rateLimit > 0 || folded {
		args = append(args, s.historyTTL)
	}
	if s.rateLimit > 0 {
		keys = append(keys, s.rateKey(rec.Session))
		args = append(args, s.rateLimit, s.rateWinMS)
	} else if folded {
		args = append(args, 0, 0)
	}
	if folded {
		args = append(args, "fold")
		if old := s.legacy(k); old != "" {
			args = append(args, s.recKey(old), old)
		}
	}
	if lockkey.IsPattern(k) {
		keys = append(keys, s.kPat)
	}
	run := func() (reply, error) { return s.run(ctx, "acquire", k, acquireScript, keys, args...) }
	var rep replicated
	if s.minReplicas > 0 {
		run = func() (reply, error) {
			var err error
			rep, err = s.runReplicated(ctx, "acquire", k, keys[3], m, acquireScript, keys, args...)
			return rep.reply, err
		}
	}
	r, err := run()
	// The counters have no floor (a new server, or one that lost its
	// data): nothing was written. Set it and ask again; a server that
	// keeps losing it is not asked forever.
	for tries := 0; err == nil && r.status() == "FLOOR"; tries++ {
		if tries == 3 {
			return locks.Lock{}, nil, &locks.UnavailableError{Store: s.display, Err: &Cause{Op: "acquire " + k,
				Reason: fmt.Sprintf("the fence floor in %s was lost again each time it was set", s.kFences)}}
		}
		if err = s.setFloor(ctx, k); err == nil {
			r, err = run()
		}
	}
	if err != nil {
		return locks.Lock{}, nil, err
	}
	switch r.status() {
	case "OK":
		if s.minReplicas > 0 && (rep.waitErr != nil || rep.acked < int64(s.minReplicas)) {
			// A failover now could promote a replica without the grant and
			// give the key to another worker: refuse it.
			return locks.Lock{}, nil, s.undoGrant(ctx, rec, m, rep.prev, rep.acked, rep.waitErr)
		}
		rec.Fence = uint64(r.int(1))
		var prev *locks.Lock
		if v := r.str(2); v != "" {
			p, err := parseValue(m, v)
			if err != nil {
				// The script vetted it; what it did not read only makes
				// the takeover's report less precise.
				p = locks.Lock{Key: k}
			}
			prev = &p
		}
		return rec, prev, nil
	case "HELD":
		cur, err := parseValue(m, r.str(1))
		if err != nil {
			return locks.Lock{}, nil, s.corrupt(m, err)
		}
		return locks.Lock{}, nil, &locks.HeldError{Lock: cur, Where: s.at(s.id(cur.Key))}
	case "RATE":
		return locks.Lock{}, nil, &locks.RateLimitedError{Limit: s.rateLimit, Window: s.rateWindow}
	case "FENCE":
		return locks.Lock{}, nil, fmt.Errorf("%s: fence counter %s: %w", s.at(m), s.kFences, locks.ErrFenceExhausted)
	case "CORRUPT":
		return locks.Lock{}, nil, s.corrupt(m, errors.New(r.str(1)))
	}
	return locks.Lock{}, nil, s.unexpected(ctx, "acquire", k, r)
}

// setFloor sets the floor of the fence counters to the highest fence of
// the lock log (Options.FenceFloor; 0 without it). Callers that met the
// missing floor together read the log once: a caller that waited for
// another's floor asks again with it.
func (s *Store) setFloor(ctx context.Context, key string) error {
	sets := s.floorSets.Load()
	s.floorMu.Lock()
	defer s.floorMu.Unlock()
	if s.floorSets.Load() != sets {
		return nil
	}
	var floor uint64
	if s.fenceFloor != nil {
		f, err := s.fenceFloor(ctx)
		if err != nil {
			// Guessing a floor could hand out a fence a grant of the lost
			// state used: refuse instead.
			return &locks.UnavailableError{Store: s.display, Err: &Cause{Op: "acquire " + key,
				Reason: fmt.Sprintf("the fence counters %s have no floor (a new server, or one that lost its data) and the highest fence of the lock log is unknown: %v", s.kFences, err),
				Err:    err}}
		}
		floor = f
	}
	if _, err := s.run(ctx, "acquire", key, floorScript, []string{s.kFences}, strconv.FormatUint(floor, 10)); err != nil {
		return err
	}
	s.floorSets.Add(1)
	return nil
}

// Release removes key's record if its token is token, drops it from its
// session's history and wakes WaitRelease callers.
func (s *Store) Release(ctx context.Context, key, token string) error {
	_, err := s.release(ctx, "release", key, token, false)
	return err
}

// Remove deletes key's record whatever its owner and returns it; a corrupt
// record is deleted too and reported as a *locks.CorruptError.
func (s *Store) Remove(ctx context.Context, key string) (locks.Lock, error) {
	return s.release(ctx, "remove", key, "", true)
}

func (s *Store) release(ctx context.Context, verb, key, token string, force bool) (locks.Lock, error) {
	rec, err := s.releaseAt(ctx, verb, key, s.id(key), token, force)
	// A legacy record of another spelling (see legacy) may be the one
	// token holds, next to the identity's own.
	if old := s.legacy(key); old != "" && (errors.Is(err, locks.ErrNotFound) || errors.Is(err, locks.ErrTokenMismatch)) {
		orec, oerr := s.releaseAt(ctx, verb, key, old, token, force)
		if !errors.Is(oerr, locks.ErrNotFound) || errors.Is(err, locks.ErrNotFound) {
			return orec, oerr
		}
	}
	return rec, err
}

// releaseAt runs releaseScript on member's record.
func (s *Store) releaseAt(ctx context.Context, verb, key, member, token string, force bool) (locks.Lock, error) {
	keys := append(make([]string, 0, 4), s.recKey(member), s.kKeys, s.kCleared)
	if lockkey.IsPattern(key) {
		keys = append(keys, s.kPat)
	}
	// Waiters listen on the identity's channel, whichever record it is.
	args := append(make([]any, 0, 5), member, token, s.histPrefix(), s.channel(s.id(key)))
	if force {
		args = append(args, "force")
	}
	r, err := s.run(ctx, verb, key, releaseScript, keys, args...)
	if err != nil {
		return locks.Lock{}, err
	}
	switch r.status() {
	case "OK":
		if !force {
			return locks.Lock{}, nil
		}
		rec, err := parseValue(member, r.str(1))
		if err != nil {
			return locks.Lock{Key: key}, s.corrupt(member, err)
		}
		return rec, nil
	case "NOTFOUND":
		return locks.Lock{}, locks.ErrNotFound
	case "MISMATCH":
		return locks.Lock{}, locks.ErrTokenMismatch
	case "CORRUPT":
		return locks.Lock{Key: key}, s.corrupt(member, errors.New(r.str(1)))
	}
	return locks.Lock{}, s.unexpected(ctx, verb, key, r)
}

// Update replaces key's record with rec if the stored token is rec.Token,
// keeping the stored fence; the new expiry also moves the instant Redis
// drops the record. The session's history gets the new record.
func (s *Store) Update(ctx context.Context, rec locks.Lock) (locks.Lock, error) {
	if err := checkRecord(rec); err != nil {
		return locks.Lock{}, err
	}
	head, tail, err := encodeValue(rec)
	if err != nil {
		return locks.Lock{}, err
	}
	got, err := s.updateAt(ctx, rec, s.id(rec.Key), head, tail)
	if old := s.legacy(rec.Key); old != "" && (errors.Is(err, locks.ErrNotFound) || errors.Is(err, locks.ErrTokenMismatch)) {
		// A leftover of an earlier version: rec has its spelling.
		ogot, oerr := s.updateAt(ctx, rec, old, head, tail)
		if !errors.Is(oerr, locks.ErrNotFound) || errors.Is(err, locks.ErrNotFound) {
			return ogot, oerr
		}
	}
	return got, err
}

// updateAt runs updateScript on member's record.
func (s *Store) updateAt(ctx context.Context, rec locks.Lock, member, head, tail string) (locks.Lock, error) {
	k := rec.Key
	keys := []string{s.recKey(member), s.histKey(rec.Session)}
	r, err := s.run(ctx, "refresh", k, updateScript, keys,
		member, rec.Token, s.lifetime(rec.ExpiresAt, time.Now()), head, tail, s.historyTTL, s.histPrefix(), rec.Session)
	if err != nil {
		return locks.Lock{}, err
	}
	switch r.status() {
	case "OK":
		rec.Fence = uint64(r.int(1))
		return rec, nil
	case "NOTFOUND":
		return locks.Lock{}, locks.ErrNotFound
	case "MISMATCH":
		return locks.Lock{}, locks.ErrTokenMismatch
	case "CORRUPT":
		return locks.Lock{}, s.corrupt(member, errors.New(r.str(1)))
	}
	return locks.Lock{}, s.unexpected(ctx, "refresh", k, r)
}

// Get returns key's record, locks.ErrNotFound or a *locks.CorruptError.
func (s *Store) Get(ctx context.Context, key string) (locks.Lock, error) {
	members := []string{s.id(key)}
	if old := s.legacy(key); old != "" {
		members = append(members, old)
	}
	// One round trip, a leftover of an earlier version included.
	entries, err := s.fetch(ctx, "get "+key, members, false, nil)
	if err != nil {
		return locks.Lock{}, err
	}
	if len(entries) == 0 {
		return locks.Lock{}, locks.ErrNotFound
	}
	if e := entries[0]; e.Err != nil {
		return locks.Lock{}, e.Err
	}
	return entries[0].Lock, nil
}

// entry turns member's record value into an Entry (Err set when it is
// corrupt).
func (s *Store) entry(member, v string) locks.Entry {
	e := locks.Entry{Name: s.recKey(member)}
	rec, err := parseValue(member, v)
	if err != nil {
		e.Key = member
		e.Err = s.corrupt(member, err)
		return e
	}
	e.Lock = rec
	return e
}

func isWrongType(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE")
}
