// Command hello is the start-up floor: a Go binary that does nothing but print.
package main

import "fmt"

func main() { fmt.Println("hello") }
