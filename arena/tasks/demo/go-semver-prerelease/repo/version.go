// Package semver parses and orders Semantic Versioning 2.0.0 versions.
package semver

import "fmt"

// Version is a parsed semantic version.
type Version struct {
	Major, Minor, Patch int
	Prerelease         []string
	Build              string
}

// String renders the version in canonical form.
func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if len(v.Prerelease) > 0 {
		s += "-" + join(v.Prerelease, ".")
	}
	if v.Build != "" {
		s += "+" + v.Build
	}
	return s
}

func join(parts []string, sep string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += sep
		}
		out += p
	}
	return out
}
