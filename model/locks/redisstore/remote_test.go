package redisstore

import "testing"

func TestNormalizeRemote(t *testing.T) {
	same := []string{
		"git@github.com:acme/proj.git",
		"git@github.com:acme/proj",
		"https://github.com/acme/proj.git",
		"https://github.com/acme/proj",
		"https://github.com/acme/proj/",
		"https://user:token@GitHub.com/acme/proj.git/",
		"https://github.com:443/acme/proj.git",
		"ssh://git@github.com/acme/proj",
		"ssh://git@github.com:22/acme/proj.git",
		"git+ssh://git@GITHUB.COM/acme/proj.git",
		"  github.com:acme/proj.git\n",
	}
	for _, u := range same {
		if got := NormalizeRemote(u); got != "github.com/acme/proj" {
			t.Errorf("NormalizeRemote(%q) = %q, want github.com/acme/proj", u, got)
		}
	}
	for u, want := range map[string]string{
		"ssh://git@host:2222/acme/proj.git": "host:2222/acme/proj",
		"https://host/Acme/Proj.git":        "host/Acme/Proj", // paths keep their case
		"/srv/git/proj.git/":                "/srv/git/proj",
		"../proj.git":                       "../proj",
		"file:///srv/git/proj.git":          "/srv/git/proj",
		"./a:b/proj":                        "./a:b/proj",
		`C:\repos\proj.git`:                 `C:\repos\proj`,
	} {
		if got := NormalizeRemote(u); got != want {
			t.Errorf("NormalizeRemote(%q) = %q, want %q", u, got, want)
		}
	}
}

func FuzzNormalizeRemote(f *testing.F) {
	for _, s := range []string{"git@github.com:acme/proj.git", "https://h/p/", "ssh://u@h:22/p", "/srv/p.git", "C:\\p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = NormalizeRemote(s) // any input: no panic
	})
}
