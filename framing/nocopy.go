package framing

// noCopy is embedded in types that must not be copied after first use;
// go vet's copylocks check flags copies of any struct holding one.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
