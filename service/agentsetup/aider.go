package agentsetup

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// aiderLint is the lint command lockgate adds: Aider appends the file it
// edited, and reads the refusal if the edit touched what another holds.
func aiderLint(bin string) string { return shellBin(bin) + " --worker-type agent guard edit" }

// aiderEntry sets .aider.conf.yml so that Aider's commits run the git
// hooks (git-commit-verify: true; Aider passes --no-verify otherwise) and
// its lint step asks the guard about each file it edited. The user's other
// keys, comments and lint commands stay; removing it takes out the lint
// command and git-commit-verify.
func aiderEntry(bin string) entry {
	lint := aiderLint(bin)
	return entry{path: ".aider.conf.yml", what: "git-commit-verify: true and a lint-cmd running the guard",
		merge: func(old []byte) ([]byte, error) {
			doc, top, err := aiderDoc(old)
			if err != nil {
				return nil, err
			}
			changed := setScalar(top, "git-commit-verify", "true", "!!bool")
			if addLint(top, lint) {
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
			if !removeLint(top, lint) {
				return old, nil
			}
			// The hooks were run because lockgate asked: its setting goes
			// with its lint command.
			removeKey(top, "git-commit-verify")
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

// setScalar sets key to a scalar, reporting whether it changed.
func setScalar(m *yaml.Node, key, v, tag string) bool {
	if n := value(m, key); n != nil {
		if n.Kind == yaml.ScalarNode && n.Value == v {
			return false
		}
		*n = yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v}
		return true
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v})
	return true
}

// addLint adds cmd to lint-cmd (a string or a list), reporting whether it
// changed.
func addLint(m *yaml.Node, cmd string) bool {
	entry := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: cmd}
	n := value(m, "lint-cmd")
	switch {
	case n == nil:
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "lint-cmd"},
			&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{entry}})
		return true
	case n.Kind == yaml.ScalarNode:
		if n.Value == cmd {
			return false
		}
		old := *n
		*n = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{&old, entry}}
		return true
	case n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Value == cmd {
				return false
			}
		}
		n.Content = append(n.Content, entry)
		return true
	}
	return false
}

// removeLint takes cmd out of lint-cmd, and lint-cmd when that empties it.
func removeLint(m *yaml.Node, cmd string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != "lint-cmd" {
			continue
		}
		n := m.Content[i+1]
		switch n.Kind {
		case yaml.ScalarNode:
			if n.Value != cmd {
				return false
			}
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return true
		case yaml.SequenceNode:
			kept := n.Content[:0]
			for _, c := range n.Content {
				if c.Value != cmd {
					kept = append(kept, c)
				}
			}
			if len(kept) == len(n.Content) {
				return false
			}
			n.Content = kept
			if len(kept) == 0 {
				m.Content = append(m.Content[:i], m.Content[i+2:]...)
			}
			return true
		}
	}
	return false
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
