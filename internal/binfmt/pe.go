package binfmt

import (
	"debug/pe"
	"io"
)

// PE is what a PE image's file header says: the machine it is built for, and whether it is a DLL.
type PE struct {
	Machine uint16 // IMAGE_FILE_MACHINE_*
	DLL     bool
}

// ReadPE reads the file header of the PE image r; its errors are debug/pe's.
func ReadPE(r io.ReaderAt) (PE, error) {
	f, err := pe.NewFile(r)
	if err != nil {
		return PE{}, err
	}
	return PE{Machine: f.Machine, DLL: f.Characteristics&pe.IMAGE_FILE_DLL != 0}, nil
}
