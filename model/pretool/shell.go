package pretool

import (
	"path"
	"strings"
)

// ShellTarget is a file a shell command names as something it writes.
type ShellTarget struct {
	// Path is as the command names it: absolute, or relative to Dir.
	Path string
	// Dir is where the command stood when it named Path, relative to
	// where the command starts ("" is there) or absolute: `cd` moves it.
	Dir string
	// Patch: Path is a patch file (`git apply FILE`) whose files are
	// written; the caller reads it.
	Patch bool
}

// ShellWrites finds the files a shell command names as write targets:
// redirections (`>`, `>>`, `&>`, `N>`, `>|`), `tee`, `sed -i`,
// `perl -i`, `mv` (both sides), `cp`, `install` and `ln` (the target),
// `rm`, `rmdir`, `touch`, `truncate`, `chmod`, `dd of=`, `git checkout
// REV [--] PATHS`, `git restore`, `git rm`, `git mv` and `git apply PATCH`,
// also inside `sh -c`/`bash -c` and after `cd DIR`. It reads the command
// as a POSIX shell would split it into words (quotes, escapes, `;`, `&&`,
// `||`, `|`, `&`, newlines, here-documents), and skips words it cannot
// know without running the command: those holding `$`, a backquote or a
// glob. What a command writes on its own (a script, a build, `python
// -c`, `git apply` from stdin, `git stash pop`) is not seen here: the
// commit hooks judge it when it is committed.
func ShellWrites(cmd string) []ShellTarget {
	s := &shellScan{}
	s.script(cmd, "", 0)
	return s.out
}

type shellScan struct{ out []ShellTarget }

// maxShellDepth bounds nested `sh -c` scripts.
const maxShellDepth = 4

// script scans one script, starting in dir.
func (s *shellScan) script(cmd, dir string, depth int) {
	if depth > maxShellDepth {
		return
	}
	for _, simple := range splitCommands(cmd) {
		dir = s.simple(simple, dir, depth)
	}
}

// word is one shell word: its text once unquoted, and whether it is only
// literal text (no expansion the shell would make).
type word struct {
	text    string
	literal bool
	op      bool // an operator or redirection token, not a word
}

// splitCommands splits a script into simple commands of words.
func splitCommands(cmd string) [][]word {
	var cmds [][]word
	var cur []word
	var heredocs []string
	flush := func() {
		if len(cur) > 0 {
			cmds = append(cmds, cur)
			cur = nil
		}
	}
	i := 0
	for i < len(cmd) {
		c := cmd[i]
		switch {
		case c == '\n':
			flush()
			i++
			// Here-document bodies follow the line that opened them.
			for _, end := range heredocs {
				for i < len(cmd) {
					j := strings.IndexByte(cmd[i:], '\n')
					line := cmd[i:]
					if j >= 0 {
						line = cmd[i : i+j]
						i += j + 1
					} else {
						i = len(cmd)
					}
					if strings.TrimLeft(line, "\t") == end {
						break
					}
				}
			}
			heredocs = nil
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#' && (i == 0 || strings.IndexByte(" \t\n;&|()", cmd[i-1]) >= 0):
			for i < len(cmd) && cmd[i] != '\n' {
				i++
			}
		case c == ';' || c == '&' && !strings.HasPrefix(cmd[i:], "&>") || c == '|' || c == '(' || c == ')' || c == '{' && i+1 < len(cmd) && (cmd[i+1] == ' ' || cmd[i+1] == '\n') || c == '}' && (i == 0 || cmd[i-1] == ' ' || cmd[i-1] == ';' || cmd[i-1] == '\n'):
			flush()
			i++
		case c == '<' && strings.HasPrefix(cmd[i:], "<<") && !strings.HasPrefix(cmd[i:], "<<<"):
			i += 2
			if i < len(cmd) && cmd[i] == '-' {
				i++
			}
			for i < len(cmd) && (cmd[i] == ' ' || cmd[i] == '\t') {
				i++
			}
			w, n := readWord(cmd[i:])
			i += n
			heredocs = append(heredocs, w.text)
		case c == '>' || c == '<' || c == '&' || c >= '0' && c <= '9' && redirAt(cmd[i:]) > 0:
			n := redirAt(cmd[i:])
			if n == 0 {
				n = 1
			}
			cur = append(cur, word{text: cmd[i : i+n], op: true})
			i += n
		default:
			w, n := readWord(cmd[i:])
			if n == 0 {
				i++
				continue
			}
			cur = append(cur, w)
			i += n
		}
	}
	flush()
	return cmds
}

// redirAt is the length of a redirection operator at the start of s: >,
// >>, >|, &>, &>>, N>, N>>, N>&M, <, <<<, N<; 0 when there is none.
func redirAt(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '&' && i == 0 && strings.HasPrefix(s, "&>") {
		i++
	}
	switch {
	case strings.HasPrefix(s[i:], ">>"), strings.HasPrefix(s[i:], ">|"), strings.HasPrefix(s[i:], ">&"), strings.HasPrefix(s[i:], "<&"):
		return i + 2
	case strings.HasPrefix(s[i:], "<<<"):
		return i + 3
	case strings.HasPrefix(s[i:], ">"), strings.HasPrefix(s[i:], "<"):
		return i + 1
	}
	return 0
}

// readWord reads one word at the start of s, unquoting it.
func readWord(s string) (word, int) {
	var b strings.Builder
	literal := true
	i := 0
loop:
	for i < len(s) {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r', ';', '&', '|', '(', ')', '<', '>':
			break loop
		case '\\':
			if i+1 < len(s) {
				if s[i+1] != '\n' {
					b.WriteByte(s[i+1])
				}
				i += 2
				continue
			}
			i++
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				b.WriteString(s[i+1:])
				i = len(s)
				continue
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				if s[i] == '$' || s[i] == '`' {
					literal = false
				}
				b.WriteByte(s[i])
				i++
			}
			i++
		case '$', '`', '*', '?', '[', '~':
			literal = false
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return word{text: b.String(), literal: literal}, i
}

// wrappers run the command that follows them.
var wrappers = map[string]bool{"sudo": true, "env": true, "command": true, "nohup": true, "time": true, "exec": true, "nice": true, "doas": true}

// simple scans one simple command standing in dir, and returns the
// directory the next command stands in.
func (s *shellScan) simple(ws []word, dir string, depth int) string {
	var args []word
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if !w.op {
			args = append(args, w)
			continue
		}
		if i+1 >= len(ws) || ws[i+1].op {
			continue
		}
		target := ws[i+1]
		i++
		op := strings.TrimLeft(w.text, "0123456789")
		if (strings.HasPrefix(op, ">") || strings.HasPrefix(op, "&>")) && op != ">&" {
			s.add(target, dir, false)
		}
	}
	// Assignments and wrappers before the command name.
	for len(args) > 0 {
		a := args[0].text
		if eq := strings.IndexByte(a, '='); eq > 0 && !strings.ContainsAny(a[:eq], "/-.") {
			args = args[1:]
			continue
		}
		if wrappers[path.Base(a)] {
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0].text, "-") {
				// sudo's and doas's options that take a value.
				if len(args[0].text) == 2 && strings.Contains("ugCDhpUrtn", args[0].text[1:]) && len(args) > 1 {
					args = args[1:]
				}
				args = args[1:]
			}
			continue
		}
		break
	}
	if len(args) == 0 {
		return dir
	}
	name := path.Base(args[0].text)
	rest := args[1:]
	operands := func(skipValue string) []word {
		var out []word
		opts := true
		for i := 0; i < len(rest); i++ {
			a := rest[i].text
			switch {
			case opts && a == "--":
				opts = false
			case opts && strings.HasPrefix(a, "-") && a != "-":
				if strings.ContainsAny(a, skipValue) && !strings.HasPrefix(a, "--") && i+1 < len(rest) && len(a) == 2 {
					i++ // an option's value
				}
			default:
				out = append(out, rest[i])
			}
		}
		return out
	}
	switch name {
	case "cd", "pushd":
		ops := operands("")
		if len(ops) == 0 {
			return "?" // home: not in the repository we know of
		}
		if !ops[0].literal {
			return "?"
		}
		if path.IsAbs(ops[0].text) || dir == "" {
			return ops[0].text
		}
		if dir == "?" {
			return "?"
		}
		return path.Join(dir, ops[0].text)
	case "sh", "bash", "zsh", "dash", "ksh":
		for i, a := range rest {
			if strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.Contains(a.text, "c") && i+1 < len(rest) {
				s.script(rest[i+1].text, dir, depth+1)
				break
			}
		}
	case "tee", "rm", "rmdir", "touch", "unlink", "shred":
		s.addAll(operands(""), dir)
	case "truncate":
		s.addAll(operands("sr"), dir)
	case "chmod", "chown", "chgrp":
		if ops := operands(""); len(ops) > 1 {
			s.addAll(ops[1:], dir)
		}
	case "mv":
		s.moveOrCopy(rest, dir, true)
	case "cp", "install", "ln", "rsync":
		s.moveOrCopy(rest, dir, false)
	case "sed", "perl":
		s.inPlace(rest, dir)
	case "dd":
		for _, a := range rest {
			if of, ok := strings.CutPrefix(a.text, "of="); ok {
				s.add(word{text: of, literal: a.literal}, dir, false)
			}
		}
	case "git":
		s.git(rest, dir)
	}
	return dir
}

// moveOrCopy adds the destination of mv, cp, install or ln, and what it
// would hold of each source; mv's sources too (they are removed).
func (s *shellScan) moveOrCopy(rest []word, dir string, move bool) {
	var ops []word
	target := ""
	opts := true
	for i := 0; i < len(rest); i++ {
		a := rest[i].text
		switch {
		case opts && a == "--":
			opts = false
		case opts && (a == "-t" || a == "--target-directory") && i+1 < len(rest):
			target = rest[i+1].text
			i++
		case opts && strings.HasPrefix(a, "--target-directory="):
			target = strings.TrimPrefix(a, "--target-directory=")
		case opts && (a == "-S" || a == "--suffix" || a == "-m" || a == "-o" || a == "-g") && i+1 < len(rest):
			i++
		case opts && strings.HasPrefix(a, "-") && a != "-":
		default:
			ops = append(ops, rest[i])
		}
	}
	srcs := ops
	if target == "" {
		if len(ops) < 2 {
			return
		}
		srcs, target = ops[:len(ops)-1], ops[len(ops)-1].text
		s.add(ops[len(ops)-1], dir, false)
	}
	for _, src := range srcs {
		if move {
			s.add(src, dir, false)
		}
		if src.literal {
			s.add(word{text: path.Join(target, path.Base(src.text)), literal: !strings.ContainsAny(target, "$`*?[~")}, dir, false)
		}
	}
}

// inPlace adds the files of `sed -i` and `perl -i`: the operands after
// the script (the first operand, unless -e or -f gave it).
func (s *shellScan) inPlace(rest []word, dir string) {
	inplace, script := false, false
	var ops []word
	for i := 0; i < len(rest); i++ {
		a := rest[i].text
		switch {
		case a == "--in-place" || strings.HasPrefix(a, "--in-place="):
			inplace = true
		case a == "-e" || a == "-f" || a == "--expression" || a == "--file":
			script = true
			i++
		case strings.HasPrefix(a, "--expression=") || strings.HasPrefix(a, "--file="):
			script = true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 1:
			flags := a[1:]
			if k := strings.IndexByte(flags, 'i'); k >= 0 {
				inplace = true
				flags = flags[:k] // what follows -i is its suffix
			}
			if strings.ContainsAny(flags, "ef") {
				script = true
				i++ // -e SCRIPT, -pe SCRIPT
			}
		default:
			ops = append(ops, rest[i])
		}
	}
	if !inplace {
		return
	}
	if !script && len(ops) > 0 {
		ops = ops[1:]
	}
	s.addAll(ops, dir)
}

// git adds what git checkout/restore/rm/mv/apply would write.
func (s *shellScan) git(rest []word, dir string) {
	// Global options before the subcommand: -C DIR moves it.
	for len(rest) > 0 && strings.HasPrefix(rest[0].text, "-") {
		switch rest[0].text {
		case "-C":
			if len(rest) > 1 {
				if rest[1].literal && dir != "?" {
					if path.IsAbs(rest[1].text) {
						dir = rest[1].text
					} else {
						dir = path.Join(dir, rest[1].text)
					}
				} else {
					dir = "?"
				}
				rest = rest[1:]
			}
		case "-c":
			if len(rest) > 1 {
				rest = rest[1:]
			}
		}
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return
	}
	sub, args := rest[0].text, rest[1:]
	afterDash := func() []word {
		for i, a := range args {
			if a.text == "--" {
				return args[i+1:]
			}
		}
		return nil
	}
	plain := func() []word {
		var out []word
		for i := 0; i < len(args); i++ {
			a := args[i].text
			switch {
			case a == "--":
			case a == "-s" || a == "--source":
				i++
			case strings.HasPrefix(a, "-"):
			default:
				out = append(out, args[i])
			}
		}
		return out
	}
	switch sub {
	case "checkout":
		// `git checkout REV -- PATHS`, or without `--` `git checkout
		// REV PATHS` (one word alone is a branch to switch to).
		paths := afterDash()
		if paths == nil {
			if ws := plain(); len(ws) > 1 {
				paths = ws[1:]
			}
		}
		s.addAll(paths, dir)
	case "restore", "rm":
		s.addAll(plain(), dir)
	case "mv":
		s.moveOrCopy(args, dir, true)
	case "apply", "am":
		for _, p := range plain() {
			if p.text != "-" {
				s.addPatch(p, dir)
			}
		}
	}
}

func (s *shellScan) addAll(ws []word, dir string) {
	for _, w := range ws {
		s.add(w, dir, false)
	}
}

func (s *shellScan) addPatch(w word, dir string) { s.add(w, dir, true) }

// add records w as a target, unless the shell would expand it or it is a
// device or another descriptor.
func (s *shellScan) add(w word, dir string, patch bool) {
	if !w.literal || w.text == "" || w.text == "-" || strings.HasPrefix(w.text, "&") || strings.HasPrefix(w.text, "/dev/") {
		return
	}
	if dir == "?" && !path.IsAbs(w.text) {
		return
	}
	s.out = append(s.out, ShellTarget{Path: w.text, Dir: dir, Patch: patch})
}
