module github.com/lockgate/lockgate/bench/peers

go 1.26.0

require (
	github.com/go-redsync/redsync/v4 v4.15.0
	github.com/lockgate/lockgate v0.0.0
	github.com/redis/go-redis/v9 v9.23.0
)

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/lockgate/lockgate => ../..
