module github.com/lockgate/lockgate

go 1.25

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/pflag v1.0.10
	gopkg.in/yaml.v3 v3.0.1
)

require (
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
