module convoy.dev/renderstore

go 1.22
