# Written by `syncsim plot`; run `gnuplot docs/capacity-70b-4k-mfu.svg.gp` to redraw.
set terminal svg size 900,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output "docs/capacity-70b-4k-mfu.svg"
set title "capacity-70b-4k.yaml: Llama-3-70B DDP on 4096 H100, MFU vs leaf oversubscription"
set xlabel "fabric.spine_leaf.oversubscription"
set ylabel "mfu"
set grid
set key below
set datafile separator '\t'
$d0 << EOD
1	0.3024634012543164	1
2	0.30246398494607246	2
3	0.3024639228935804	3
4	0.3024660569295044	4
EOD
$d1 << EOD
1	0.49435235084933193	1
2	0.4925430258233654	2
3	0.4932987689201875	3
4	0.4919936174526733	4
EOD
plot $d0 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.host.bandwidth=400Gbps", \
     $d1 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.host.bandwidth=800Gbps"
