module github.com/lockgate/lockgate

go 1.24.0

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
