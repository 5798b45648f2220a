package bad

/* want "directive" */ //detlint:file-allow select

// FileAllowNoReason has a file-allow without a reason, which exempts nothing.
func FileAllowNoReason(c chan int) {
	select { // want "select"
	case <-c:
	default:
	}
}
