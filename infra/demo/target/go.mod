module benchtrail.dev/demo/target

go 1.22
