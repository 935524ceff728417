package sqs

// Waiting is how many long polls are parked, waiting for a message.
func (s *Service) Waiting() int { return int(s.waiting.Load()) }
