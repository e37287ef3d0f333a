package views

// titleOrID is a session's title, or its id when it has none.
func titleOrID(title, id string) string {
	if title != "" {
		return visible(title)
	}
	return id
}
