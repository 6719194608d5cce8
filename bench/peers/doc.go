// Package peers measures lockgate's stores against other lock libraries
// in the same run. It is a module of its own so that the libraries it
// compares against stay out of lockgate's requirements; `make bench` runs it.
package peers
