mod parser_props;
