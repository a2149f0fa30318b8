module github.com/example/semver

go 1.19
