module benchtrail.corpus/gobench

go 1.22
