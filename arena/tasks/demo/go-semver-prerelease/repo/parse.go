package semver

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads "MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]", with an optional leading "v".
func Parse(text string) (Version, error) {
	var v Version
	s := strings.TrimPrefix(text, "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		v.Build = s[i+1:]
		s = s[:i]
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		v.Prerelease = strings.Split(s[i+1:], ".")
		s = s[:i]
	}
	core := strings.Split(s, ".")
	if len(core) != 3 {
		return Version{}, fmt.Errorf("semver: %q needs MAJOR.MINOR.PATCH", text)
	}
	nums := make([]int, 3)
	for i, part := range core {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return Version{}, fmt.Errorf("semver: %q: bad number %q", text, part)
		}
		nums[i] = n
	}
	v.Major, v.Minor, v.Patch = nums[0], nums[1], nums[2]
	return v, nil
}

// MustParse is Parse for constants in tests and tables.
func MustParse(text string) Version {
	v, err := Parse(text)
	if err != nil {
		panic(err)
	}
	return v
}
