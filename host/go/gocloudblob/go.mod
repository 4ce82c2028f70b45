module convoy.dev/renderstore/gocloudblob

go 1.22

require gocloud.dev v0.23.0
