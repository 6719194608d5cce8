// Package locktest is the conformance suite every locks.Store backend
// must pass, in the manner of go-git's storage tests: a backend's test calls
// Run with a function that opens a fresh, empty store.
//
//	func TestConformance(t *testing.T) {
//		locktest.Run(t, func(t *testing.T) locks.Store {
//			s, err := filestore.Open(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Run also hands a key over through the Manager's --wait on every store,
// and holds stores that signal releases (locks.Waiter) to that
// contract. Goroutine races are part of Run. Races between processes,
// which is how lockgate's users actually collide, need the backend's test
// binary to run itself as helper processes: the backend defines a test
// that calls HelperProcess, then RunProcessRace and StartChurn start copies
// of the test binary that run only that test.
package locktest
