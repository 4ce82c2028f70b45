module convoy/renderstore

go 1.22
