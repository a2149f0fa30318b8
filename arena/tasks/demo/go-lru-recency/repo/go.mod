module github.com/example/lru

go 1.19
