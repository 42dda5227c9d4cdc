module benchtrail.example/otelbench

go 1.22
