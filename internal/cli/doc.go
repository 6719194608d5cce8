// Package cli wires lockgate's commands: flag sets, options structs, output
// rendering, and the one place where errors become exit codes. Everything it
// decides is delegated to the workflow, scope and hooks packages.
package cli
