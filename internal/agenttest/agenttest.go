package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/fakemodel"
)

// Harness names a coding-agent CLI.
type Harness = fakemodel.Harness

// The harnesses Run drives.
const (
	Claude   = fakemodel.Claude
	Codex    = fakemodel.Codex
	Gemini   = fakemodel.Gemini
	OpenCode = fakemodel.OpenCode
	Copilot  = fakemodel.Copilot
)

// Harnesses is every harness Run drives, in a fixed order.
var Harnesses = fakemodel.Harnesses

// Package is where a harness comes from: its npm package, the pinned
// version scripts/test-agents-deps.sh installs, and its binary's name.
type Package struct {
	Name    string
	Version string
	Bin     string
}

// Packages are the pinned harnesses; scripts/test-agents-deps.sh pins the
// same versions (TestPinsMatchScript holds them together).
var Packages = map[Harness]Package{
	Claude:   {"@anthropic-ai/claude-code", "2.1.332", "claude"},
	Codex:    {"@openai/codex", "0.171.0", "codex"},
	Gemini:   {"@google/gemini-cli", "0.61.0", "gemini"},
	OpenCode: {"opencode-ai", "1.18.33", "opencode"},
	Copilot:  {"@github/copilot", "1.0.102", "copilot"},
}

// OpenCodePlugin is the package opencode installs into a config directory
// that has a plugin; the deps script installs it beside opencode so that
// Run can link it in and opencode need not reach the registry.
var OpenCodePlugin = Package{"@opencode-ai/plugin", "1.18.33", ""}

// Models are the model names each harness is run with. The fake server
// answers to any name; the name picks the harness's tool set: Copilot
// offers create/edit only to non-GPT-5 models (with a GPT-5 model over Chat
// Completions it offers neither, nor apply_patch).
var Models = map[Harness]string{
	Claude:   "claude-sonnet-4-5",
	Codex:    "gpt-5.5",
	Gemini:   "gemini-2.5-flash",
	OpenCode: "fake-model",
	Copilot:  "claude-sonnet-4.5",
}

// Dir is the cache the harnesses are installed in.
func Dir() string {
	if d := os.Getenv("LOCKGATE_AGENTS_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "lockgate", "agents")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "lockgate", "agents")
}

// Binary is the path of the harness's installed binary, or an error naming
// scripts/test-agents-deps.sh when it is not installed.
func Binary(h Harness) (string, error) {
	p, ok := Packages[h]
	if !ok {
		return "", fmt.Errorf("agenttest: unknown harness %q", h)
	}
	bin := filepath.Join(Dir(), p.Name+"@"+p.Version, "node_modules", ".bin", p.Bin)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("agenttest: %s %s@%s is not installed (no %s); run scripts/test-agents-deps.sh", h, p.Name, p.Version, bin)
	}
	return bin, nil
}

// Require is the harness's binary; when it is missing the test fails (it
// does not skip) with a message naming scripts/test-agents-deps.sh.
func Require(t testing.TB, h Harness) string {
	t.Helper()
	bin, err := Binary(h)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Result is what a harness run did.
type Result struct {
	ExitCode int
	Stdout   string
	Stderr   string
	Duration time.Duration
	// Home is the run's private home directory (kept only when Options.Home
	// was given: logs and session files are there).
	Home string
	// Args is the command line, for failure messages.
	Args []string
}

// String is a summary for failure messages.
func (r Result) String() string {
	return fmt.Sprintf("exit %d after %s\n$ %s\n--- stdout\n%s\n--- stderr\n%s", r.ExitCode, r.Duration.Round(time.Millisecond),
		strings.Join(r.Args, " "), clip(r.Stdout), clip(r.Stderr))
}

func clip(s string) string {
	const max = 8000
	if len(s) > max {
		return s[:max/2] + "\n…\n" + s[len(s)-max/2:]
	}
	return s
}

// DefaultTimeout bounds a run when the context has no deadline.
const DefaultTimeout = 3 * time.Minute

// Options is a run in full.
type Options struct {
	Harness  Harness
	RepoDir  string
	Prompt   string
	ModelURL string // the fake model's root URL, no trailing slash
	// Home is the run's home directory; a fresh temporary one, removed
	// after the run, when empty.
	Home string
	// Timeout bounds the run; DefaultTimeout when zero and ctx has no
	// deadline.
	Timeout time.Duration
	// Env is added to the run's environment (KEY=VALUE).
	Env []string
}

// Run runs harness h headless in repoDir on prompt against the model at
// modelURL. A non-zero exit is not an error; a harness that cannot be
// started, or that is killed by the timeout, is.
//
// Run writes nothing into repoDir except for opencode: when repoDir has a
// .opencode/ directory without node_modules, Run links the cached
// @opencode-ai/plugin there (node_modules, package.json, package-lock.json;
// opencode itself adds a .gitignore for them), so that opencode does not
// install it from npm at start.
func Run(ctx context.Context, h Harness, repoDir, prompt, modelURL string) (Result, error) {
	return Options{Harness: h, RepoDir: repoDir, Prompt: prompt, ModelURL: modelURL}.Run(ctx)
}

// Run runs the harness as o says.
func (o Options) Run(ctx context.Context) (Result, error) {
	bin, err := Binary(o.Harness)
	if err != nil {
		return Result{}, err
	}
	if o.Home == "" {
		tmp, err := os.MkdirTemp("", "lockgate-agent-"+string(o.Harness)+"-")
		if err != nil {
			return Result{}, err
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		o.Home = tmp
	}
	home, err := filepath.Abs(o.Home)
	if err != nil {
		return Result{}, err
	}
	repo, err := filepath.Abs(o.RepoDir)
	if err != nil {
		return Result{}, err
	}
	for _, d := range []string{".config", ".cache", ".local/share", ".local/state", "tmp"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			return Result{}, err
		}
	}
	env := baseEnv(home)
	args, extra, err := setup(o.Harness, home, repo, o.Prompt, o.ModelURL)
	if err != nil {
		return Result{}, fmt.Errorf("agenttest: set up %s: %w", o.Harness, err)
	}
	env = append(append(env, extra...), o.Env...)

	timeout := o.Timeout
	if _, ok := ctx.Deadline(); !ok && timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = repo
	cmd.Env = env
	cmd.Stdin = nil // /dev/null
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	killGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	reapGroup(cmd)
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(start),
		Args: append([]string{bin}, args...)}
	if o.Home != "" {
		res.Home = home
	}
	if ctx.Err() != nil {
		res.ExitCode = -1
		return res, fmt.Errorf("agenttest: %s did not finish in time: %w\n%s", o.Harness, ctx.Err(), res)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	default:
		return res, fmt.Errorf("agenttest: run %s: %w", o.Harness, err)
	}
	return res, nil
}

// baseEnv is the environment every harness starts from: a private home,
// no color, no update checks, and little from the caller's environment.
func baseEnv(home string) []string {
	env := []string{
		"HOME=" + home,
		"USERPROFILE=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"TERM=dumb",
		"NO_COLOR=1",
		"CI=true",
		"LANG=C.UTF-8",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		// npm (and the CLIs that call it) must not go looking for updates
		// or reach the registry unasked.
		"NO_UPDATE_NOTIFIER=1",
		"npm_config_update_notifier=false",
		"npm_config_fund=false",
		"npm_config_audit=false",
		"DO_NOT_TRACK=1",
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" {
			env = append(env, kv)
		}
	}
	return env
}

// setup writes the harness's user-level configuration under home and
// returns its command line and environment.
func setup(h Harness, home, repo, prompt, url string) (args, env []string, err error) {
	model := Models[h]
	switch h {
	case Claude:
		env = []string{
			"ANTHROPIC_BASE_URL=" + url,
			"ANTHROPIC_API_KEY=sk-ant-fake",
			"ANTHROPIC_MODEL=" + model,
			"ANTHROPIC_SMALL_FAST_MODEL=" + model,
			"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
			"DISABLE_AUTOUPDATER=1",
			"DISABLE_TELEMETRY=1",
			"DISABLE_ERROR_REPORTING=1",
			"DISABLE_BUG_COMMAND=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		}
		// acceptEdits: file edits run without asking; Bash still needs a
		// permission, given by --allowedTools.
		args = []string{"-p", prompt, "--permission-mode", "acceptEdits", "--allowedTools", "Bash",
			"--output-format", "json", "--model", model}
	case Codex:
		codexHome := filepath.Join(home, ".codex")
		if err := os.MkdirAll(codexHome, 0o755); err != nil {
			return nil, nil, err
		}
		cfg := fmt.Sprintf(`model = %q
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = %q
env_key = "FAKE_MODEL_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[projects.%q]
trust_level = "trusted"
`, model, url+"/v1", repo)
		if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o644); err != nil {
			return nil, nil, err
		}
		env = []string{"CODEX_HOME=" + codexHome, "FAKE_MODEL_API_KEY=fake", "OPENAI_API_KEY=fake"}
		args = []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
			"-s", "danger-full-access", "-m", model, prompt}
	case Gemini:
		dir := filepath.Join(home, ".gemini")
		settings := map[string]any{
			"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
			"privacy":   map[string]any{"usageStatisticsEnabled": false},
			"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
			"telemetry": map[string]any{"enabled": false},
		}
		if err := writeJSON(filepath.Join(dir, "settings.json"), settings); err != nil {
			return nil, nil, err
		}
		env = []string{
			"GOOGLE_GEMINI_BASE_URL=" + url,
			"GEMINI_API_KEY=fake",
			"GEMINI_CLI_TRUST_WORKSPACE=true",
			"GEMINI_CLI_NO_RELAUNCH=true",
		}
		args = []string{"-p", prompt, "--yolo", "-m", model}
	case OpenCode:
		dir := filepath.Join(home, ".config", "opencode")
		cfg := map[string]any{
			"$schema":     "https://opencode.ai/config.json",
			"autoupdate":  false,
			"share":       "disabled",
			"model":       "fake/" + model,
			"small_model": "fake/" + model,
			"permission":  map[string]any{"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"},
			"provider": map[string]any{"fake": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "fake",
				"options": map[string]any{"baseURL": url + "/v1", "apiKey": "fake"},
				"models":  map[string]any{model: map[string]any{"name": model, "tool_call": true}},
			}},
		}
		if err := writeJSON(filepath.Join(dir, "opencode.json"), cfg); err != nil {
			return nil, nil, err
		}
		if err := linkOpenCodePlugin(dir, repo); err != nil {
			return nil, nil, err
		}
		env = []string{
			"OPENCODE_DISABLE_AUTOUPDATE=1",
			"OPENCODE_DISABLE_MODELS_FETCH=1",
			"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
			"OPENCODE_DISABLE_SHARE=1",
			"OPENCODE_DISABLE_CLAUDE_CODE=1",
			// Its bundled npm must not fetch: whatever is missing fails
			// at once instead of reaching the registry.
			"npm_config_offline=true",
			"npm_config_fetch_retries=0",
		}
		args = []string{"run", prompt}
	case Copilot:
		env = []string{
			"COPILOT_HOME=" + filepath.Join(home, ".copilot"),
			"COPILOT_OFFLINE=true",
			"COPILOT_PROVIDER_BASE_URL=" + url + "/v1",
			"COPILOT_PROVIDER_API_KEY=fake",
			"COPILOT_MODEL=" + model,
			"COPILOT_ALLOW_ALL=true",
			"COPILOT_AUTO_UPDATE=false",
		}
		args = []string{"-p", prompt, "--allow-all", "--no-auto-update", "--no-color"}
	default:
		return nil, nil, fmt.Errorf("unknown harness %q", h)
	}
	return args, env, nil
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// linkOpenCodePlugin makes @opencode-ai/plugin present, from the deps
// script's install, in the config directories where opencode would
// otherwise install it from npm at start: the run's config dir and the
// repository's .opencode/ when it has one without node_modules.
//
// opencode 1.18 (Npm.install) reifies a config dir with its bundled
// Arborist unless the dir has node_modules and every dependency of its
// package.json (plus @opencode-ai/plugin) is in package-lock.json's root
// package. A symlinked node_modules with the install's package.json and
// package-lock.json beside it satisfies that check, so nothing is fetched.
func linkOpenCodePlugin(configDir, repo string) error {
	cache := filepath.Join(Dir(), "opencode-plugin@"+OpenCodePlugin.Version)
	src := filepath.Join(cache, "node_modules")
	if _, err := os.Stat(filepath.Join(src, "@opencode-ai", "plugin", "package.json")); err != nil {
		return fmt.Errorf("%s@%s is not installed in %s; run scripts/test-agents-deps.sh", OpenCodePlugin.Name, OpenCodePlugin.Version, cache)
	}
	dirs := []string{configDir}
	if fi, err := os.Stat(filepath.Join(repo, ".opencode")); err == nil && fi.IsDir() {
		dirs = append(dirs, filepath.Join(repo, ".opencode"))
	}
	for _, d := range dirs {
		nm := filepath.Join(d, "node_modules")
		if _, err := os.Lstat(nm); err == nil {
			continue
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.Symlink(src, nm); err != nil {
			return err
		}
		for _, f := range []string{"package.json", "package-lock.json"} {
			if _, err := os.Stat(filepath.Join(d, f)); err == nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join(cache, f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(d, f), b, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
