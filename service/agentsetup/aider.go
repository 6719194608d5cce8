package agentsetup

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// aiderLint is the lint command lockgate adds: Aider appends the file it
// edited, and reads the refusal if the edit touched what another holds.
func aiderLint(bin string) string { return shellBin(bin) + " --worker-type agent guard edit" }

// aiderMark is the comment on what lockgate adds to .aider.conf.yml: what
// removing its set-up takes out again, and only that.
const aiderMark = "added by lockgate agent setup"

// aiderEntry sets .aider.conf.yml so that Aider's commits run the git
// hooks (git-commit-verify: true; Aider passes --no-verify otherwise)
// and, when the file has no lint-cmd, its lint step asks the guard about
// each file it edited. Aider runs a language-less lint command in place
// of every other one, so a lint-cmd of the user's is left as it is. The
// user's keys and comments stay; what lockgate adds carries aiderMark.
func aiderEntry(bin string) entry {
	lint := aiderLint(bin)
	return entry{path: ".aider.conf.yml", what: "git-commit-verify: true (and a lint-cmd running the guard where there is none)",
		merge: func(old []byte) ([]byte, error) {
			doc, top, err := aiderDoc(old)
			if err != nil {
				return nil, err
			}
			changed := false
			switch n := value(top, "git-commit-verify"); {
			case n == nil:
				top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "git-commit-verify"},
					&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true", LineComment: "# " + aiderMark})
				changed = true
			case n.Kind != yaml.ScalarNode:
				return nil, &Error{Msg: "git-commit-verify is not true or false: fix it by hand"}
			case n.Value != "true":
				*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true", LineComment: "# " + aiderMark + " (was " + n.Value + ")"}
				changed = true
			}
			if value(top, "lint-cmd") == nil {
				top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "lint-cmd"},
					&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{
						{Kind: yaml.ScalarNode, Tag: "!!str", Value: lint, LineComment: "# " + aiderMark}}})
				changed = true
			}
			if !changed {
				return old, nil
			}
			return encodeYAML(doc)
		},
		remove: func(old []byte) ([]byte, error) {
			doc, top, err := aiderDoc(old)
			if err != nil {
				return nil, err
			}
			changed := false
			if n := value(top, "git-commit-verify"); n != nil && strings.Contains(n.LineComment, aiderMark) {
				if was, ok := strings.CutPrefix(n.LineComment, "# "+aiderMark+" (was "); ok {
					*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strings.TrimSuffix(was, ")")}
				} else {
					removeKey(top, "git-commit-verify")
				}
				changed = true
			}
			if n := value(top, "lint-cmd"); n != nil && n.Kind == yaml.SequenceNode {
				kept := n.Content[:0]
				for _, c := range n.Content {
					if !strings.Contains(c.LineComment, aiderMark) {
						kept = append(kept, c)
					}
				}
				if len(kept) != len(n.Content) {
					n.Content = kept
					changed = true
					if len(kept) == 0 {
						removeKey(top, "lint-cmd")
					}
				}
			}
			if !changed {
				return old, nil
			}
			if len(top.Content) == 0 {
				return nil, nil
			}
			return encodeYAML(doc)
		}}
}

// aiderDoc parses the file; an empty one is an empty mapping.
func aiderDoc(old []byte) (*yaml.Node, *yaml.Node, error) {
	var doc yaml.Node
	if len(bytes.TrimSpace(old)) > 0 {
		if err := yaml.Unmarshal(old, &doc); err != nil {
			return nil, nil, &Error{Msg: fmt.Sprintf("is not YAML (%v): fix it by hand; lockgate does not overwrite it", err)}
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, &Error{Msg: "is not a YAML mapping: fix it by hand"}
	}
	return &doc, doc.Content[0], nil
}

func encodeYAML(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return b.Bytes(), nil
}

// value is the node of key in mapping m, nil when absent.
func value(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// removeKey deletes key from mapping m.
func removeKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
