// Package inferencepb is the generated Go code of the Open Inference
// Protocol's gRPC service (KServe v2, package inference), with Triton's
// ModelStreamInfer. grpc_service.proto is its source; the .pb.go files are
// generated and committed, so that builds need no protoc.
package inferencepb

//go:generate sh -c "protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --plugin=protoc-gen-go-grpc=$(go tool -n protoc-gen-go-grpc) --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative grpc_service.proto"
