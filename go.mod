module aimeter

go 1.26
