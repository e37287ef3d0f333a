package elicit

// HeldForRoom is how many rule answers wait for room in the backlog of unstored ones.
func HeldForRoom(s *Service) int {
	s.behind.mu.Lock()
	defer s.behind.mu.Unlock()
	return s.behind.held
}
