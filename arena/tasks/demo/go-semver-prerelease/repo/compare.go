package semver

import "sort"

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Compare returns -1, 0 or 1 as a is older than, as old as, or newer than b.
// Build metadata does not take part in the order.
func Compare(a, b Version) int {
	if c := cmpInt(a.Major, b.Major); c != 0 {
		return c
	}
	if c := cmpInt(a.Minor, b.Minor); c != 0 {
		return c
	}
	if c := cmpInt(a.Patch, b.Patch); c != 0 {
		return c
	}
	return comparePrerelease(a.Prerelease, b.Prerelease)
}

func comparePrerelease(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareIdentifier(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmpInt(len(a), len(b))
}

// Sort orders versions from oldest to newest.
func Sort(versions []Version) {
	sort.SliceStable(versions, func(i, j int) bool { return Compare(versions[i], versions[j]) < 0 })
}

// Newest returns the newest of versions, or false when there are none.
func Newest(versions []Version) (Version, bool) {
	if len(versions) == 0 {
		return Version{}, false
	}
	best := versions[0]
	for _, v := range versions[1:] {
		if Compare(v, best) > 0 {
			best = v
		}
	}
	return best, true
}

// compareIdentifier orders two dot-separated pre-release identifiers.
func compareIdentifier(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
