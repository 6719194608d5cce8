package gitexec

import "net/url"

// RedactURL hides the password of a remote given as a URL, as git does in
// its messages.
func RedactURL(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.User == nil {
		return remote
	}
	if _, ok := u.User.Password(); !ok {
		return remote
	}
	u.User = url.UserPassword(u.User.Username(), "xxxxx")
	return u.String()
}
